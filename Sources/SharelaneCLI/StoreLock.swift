import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lock a sharelane process holds on a local store file while it writes to it, so that two applies on
/// one store wait for each other instead of interleaving (Terraform's state lock).
///
/// An advisory `flock` on `STORE.lock` beside the store file, which holds who took it (pid, operation, time)
/// as JSON. The kernel releases the lock when the process exits, however it exits: a crashed apply leaves
/// no lock behind, only the file, which the next process reuses. `memory:` needs no lock, and over `http:`
/// the server's change tags refuse a writer that lost a race.
final class StoreLock: Sendable {
    /// Who holds a lock, as written in the lock file.
    struct Holder: Codable, Sendable, Equatable {
        var pid: Int32
        /// The command that took it: `apply`, `run LANE`.
        var operation: String
        /// When it was taken (ISO 8601).
        var created: String
    }

    /// The lock file, `STORE.lock`.
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        // Released by the kernel at exit in any case; explicit for a lock released early (tests).
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// The lock file of the store file at `storePath`.
    static func lockPath(forStore storePath: String) -> String { storePath + ".lock" }

    /// Takes the lock of the store file at `storePath`, waiting up to `timeout` while another process holds
    /// it; `waiting` is called once, with the holder, when the lock is held.
    /// - Throws: `StoreLockError.held` naming the holder when the time runs out; `.cannotOpen` when the lock
    ///   file cannot be created.
    static func acquire(
        storePath: String, operation: String, timeout: TimeLimit, waiting: (Holder?) -> Void = { _ in }
    ) async throws -> StoreLock {
        let path = lockPath(forStore: storePath)
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StoreLockError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        let start = ContinuousClock.now
        let limit = Duration.milliseconds(Int64((timeout.seconds * 1000).rounded()))
        var announced = false
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else {
                close(descriptor)
                throw StoreLockError.cannotOpen(path: path, reason: String(cString: strerror(failure)))
            }
            if failure == EINTR { continue }
            let holder = readHolder(descriptor)
            if ContinuousClock.now - start >= limit {
                close(descriptor)
                throw StoreLockError.held(
                    store: "sqlite:\(storePath)", lockPath: path, holder: holder, waited: timeout)
            }
            if !announced {
                announced = true
                waiting(holder)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let lock = StoreLock(path: path, descriptor: descriptor)
        let holder = Holder(
            pid: getpid(), operation: operation,
            // The format style, not `ISO8601DateFormatter`, whose ICU set-up cost more than the rest of taking
            // the lock; the same text, `2026-11-24T04:10:17Z`.
            created: Date.now.formatted(.iso8601))
        if let data = try? JSONEncoder().encode(holder) {
            _ = ftruncate(descriptor, 0)
            _ = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return lock
    }

    /// Who holds the lock, from the lock file; nil when it says nothing readable yet.
    private static func readHolder(_ descriptor: Int32) -> Holder? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return try? JSONDecoder().decode(Holder.self, from: Data(buffer[0..<count]))
    }
}

/// A store lock that could not be taken.
enum StoreLockError: Error, CustomStringConvertible {
    case held(store: String, lockPath: String, holder: StoreLock.Holder?, waited: TimeLimit)
    case cannotOpen(path: String, reason: String)

    var description: String {
        switch self {
        case .held(let store, let lockPath, let holder, let waited):
            let who =
                holder.map { "sharelane process \($0.pid) (\($0.operation), since \($0.created))" }
                ?? "another sharelane process"
            var lines = [
                "cannot take the store lock: \(store) is locked by \(who); waited \(waited) (--lock-timeout).",
                "",
                "Lock Info:",
                "  Path:      \(lockPath)",
            ]
            if let holder {
                lines += [
                    "  PID:       \(holder.pid)",
                    "  Operation: \(holder.operation)",
                    "  Created:   \(holder.created)",
                ]
            }
            lines += [
                "",
                "sharelane locks a local store while it writes to it, so that two applies do not interleave. Wait "
                    + "for that process to finish and run again, or wait longer with --lock-timeout (e.g. "
                    + "--lock-timeout 2m). The lock goes when that process exits, even if it crashes: there is "
                    + "nothing to unlock by hand.",
            ]
            return lines.joined(separator: "\n")
        case .cannotOpen(let path, let reason):
            return "cannot create the store lock \(path): \(reason); check that its directory is writable"
        }
    }
}
