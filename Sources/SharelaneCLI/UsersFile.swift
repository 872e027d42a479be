import Foundation
import ShareKit

/// A file of the user's data (a snapshot of every world): written whole beside its place, readable by this
/// user only from its creation, then moved over the old one, so that no reader sees half of it or another
/// user a moment of it.
enum PrivateFile {
    static func replace(_ path: String, with data: Data) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID())")
        try UsersFile.write(data, to: temporary.path)
        guard rename(temporary.path, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CommandFailure.input("cannot write \(path): \(reason)")
        }
    }
}

/// The file of the fixture's people and their tokens (`SHARELANE_USERS`): in a folder only this user can
/// enter, created readable by this user only, never for an instant by others.
///
/// Each run's folder is named for serve's process ID inside one folder of this user's
/// (`$XDG_RUNTIME_DIR/sharelane`, or `sharelane-UID` in the temporary folder): a serve killed with SIGKILL
/// cannot remove its own, so every start removes the folders of serves that are no longer running.
enum UsersFile {
    /// The folder of every run's users file, this user's only.
    static func parent() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
            FileManager.default.fileExists(atPath: runtime)
        {
            base = URL(fileURLWithPath: runtime).appendingPathComponent("sharelane")
        } else {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("sharelane-\(getuid())")
        }
        if mkdir(base.path, 0o700) != 0, errno != EEXIST {
            throw CommandFailure.input(
                "cannot make a folder for the users file in \(base.deletingLastPathComponent().path): "
                    + String(cString: strerror(errno)))
        }
        // A folder of that name another user made would let them read the tokens: refused.
        var status = stat()
        guard lstat(base.path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == getuid(),
            (status.st_mode & 0o077) == 0
        else {
            throw CommandFailure.input(
                "cannot keep the users file in \(base.path): it is not a folder of this user's that only they can "
                    + "enter; remove it and start again")
        }
        return base
    }

    /// A new folder for this run's users file, after removing those of serves no longer running.
    static func folder() throws -> URL {
        let parent = try parent()
        removeStale(in: parent)
        let folder = parent.appendingPathComponent("fixture-\(getpid())-\(UUID().uuidString.prefix(8))")
        guard mkdir(folder.path, 0o700) == 0 else {
            throw CommandFailure.input(
                "cannot make a folder for the users file in \(parent.path): " + String(cString: strerror(errno)))
        }
        return folder
    }

    /// Removes the run folders whose serve is gone (killed with SIGKILL, or the machine stopped).
    static func removeStale(in parent: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix("fixture-") {
            let parts = name.split(separator: "-")
            guard parts.count == 3, let pid = pid_t(parts[1]), pid > 0 else { continue }
            if kill(pid, 0) == 0 || errno != ESRCH { continue }
            try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
        }
    }

    static func write(_ data: Data, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CommandFailure.input("cannot write the users file \(path): " + String(cString: strerror(errno)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: data)
        try handle.close()
    }
}
