import Foundation

/// The files of a git revision, written out to a temporary folder so that a recipe there loads as it would
/// from a checkout: its includes, `.env` files and `!asset` files beside it. The repository is only read:
/// the revision goes through an index file of its own, never the repository's index or working tree.
struct GitRevisionTree {
    /// The revision as the user named it (`origin/main`).
    let revision: String
    /// The commit it names.
    let commit: String
    /// The repository's root in the working tree.
    let repositoryRoot: String
    /// The folder holding the revision's files, removed by `remove()`.
    let folder: URL

    /// Finds the repository holding `directory` and the commit `revision` names there.
    /// - Throws: `CLIFailure` when `directory` is in no git repository or the revision names no commit.
    static func resolve(revision: String, in directory: String) throws -> (root: String, commit: String) {
        guard !revision.isEmpty else { throw CLIFailure("`git:` needs a revision: git:REF or git:REF:PATH") }
        let root: String
        do {
            root = try git(["rev-parse", "--show-toplevel"], in: directory)
        } catch {
            throw CLIFailure("--against git:\(revision) reads a git repository, and \(directory) is in none: \(error)")
        }
        do {
            let commit = try git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", "\(revision)^{commit}"], in: root)
            return (root, commit)
        } catch {
            throw CLIFailure(
                "--against git:\(revision): no commit named \(revision) in the repository at \(root); fetch it first (a shallow clone has only the commit it checked out: `git fetch origin main`)"
            )
        }
    }

    /// The path of `file` relative to the root of the repository that holds it, as git names it.
    /// - Throws: `CLIFailure` when its folder is in no git repository.
    static func pathInRepository(of file: String) throws -> String {
        let url = URL(fileURLWithPath: file)
        let directory = url.deletingLastPathComponent().path
        do {
            let prefix = try git(["rev-parse", "--show-prefix"], in: directory)
            return prefix + url.lastPathComponent
        } catch {
            throw CLIFailure("--against git:… reads the recipe's repository, and \(file) is in none: \(error)")
        }
    }

    /// Whether `path` (relative to the root) is a file at `commit`.
    static func hasFile(_ path: String, commit: String, root: String) -> Bool {
        (try? git(["cat-file", "-e", "\(commit):\(path)"], in: root)) != nil
    }

    /// Writes the files of `commit` to a new temporary folder.
    /// - Throws: `CLIFailure` when git cannot write them.
    static func checkOut(revision: String, commit: String, root: String) throws -> GitRevisionTree {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharelane-against-\(UUID().uuidString)", isDirectory: true)
        let tree = GitRevisionTree(revision: revision, commit: commit, repositoryRoot: root, folder: folder)
        do {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("files"), withIntermediateDirectories: true)
            // An index of its own: reading a revision must not touch what the user has staged.
            let index = ["GIT_INDEX_FILE": folder.appendingPathComponent("index").path]
            _ = try git(["read-tree", commit], in: root, environment: index)
            _ = try git(
                ["checkout-index", "--all", "--force", "--prefix=\(tree.files.path)/"], in: root, environment: index)
        } catch {
            tree.remove()
            throw CLIFailure("--against git:\(revision): cannot write out its files: \(error)")
        }
        return tree
    }

    /// The folder of the revision's files (the repository's root at that revision).
    var files: URL { folder.appendingPathComponent("files", isDirectory: true) }

    /// The path of `path` (relative to the repository's root) among the revision's files.
    func file(_ path: String) -> String { files.appendingPathComponent(path).path }

    /// `text` with the temporary folder's paths written as git names a file at a revision
    /// (`origin/main:sharelane.yaml:4:7: error: …`).
    func naming(_ text: String) -> String {
        text.replacingOccurrences(of: files.path + "/", with: "\(revision):")
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// Runs git with `arguments` in `directory`, answering its standard output without the last newline.
    /// - Throws: `GitFailure` with what git said when it exits with another status than 0.
    @discardableResult
    static func git(_ arguments: [String], in directory: String, environment extra: [String: String] = [:]) throws
        -> String
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment.merge(extra) { _, new in new }
        // The user's locale would translate git's messages, which are passed on.
        environment["LC_ALL"] = "C"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw GitFailure(message: "cannot run git: \(error)")
        }
        // git's answers here are a line or two; its errors too, so reading one pipe after the other cannot
        // fill the second.
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let said = String(decoding: err, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw GitFailure(message: said.isEmpty ? "git \(arguments.first ?? "") failed" : said)
        }
        var text = String(decoding: out, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}

/// What git said when it failed.
struct GitFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
