import ChildProcesses
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
    /// The symbolic links of the revision that lead out of it (paths from the root), left out of `files`.
    var linksLeaving: [String] = []

    /// Finds the repository holding `directory` and the commit `revision` names there.
    /// - Throws: `CommandFailure` when `directory` is in no git repository or the revision names no commit.
    static func resolve(revision: String, in directory: String) async throws -> (root: String, commit: String) {
        guard !revision.isEmpty else { throw CommandFailure.usage("`git:` needs a revision: git:REF or git:REF:PATH") }
        let root: String
        do {
            root = try await git(["rev-parse", "--show-toplevel"], in: directory)
        } catch {
            throw CommandFailure.input(
                "--against git:\(revision) reads a git repository, and \(directory) is in none: \(error)")
        }
        do {
            let commit = try await git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", "\(revision)^{commit}"], in: root)
            return (root, commit)
        } catch {
            throw CommandFailure.input(
                "--against git:\(revision): no commit named \(revision) in the repository at \(root); fetch it first (a shallow clone has only the commit it checked out: `git fetch origin main`)"
            )
        }
    }

    /// The path of `file` relative to the root of the repository that holds it, as git names it.
    /// - Throws: `CommandFailure` when its folder is in no git repository.
    static func pathInRepository(of file: String) async throws -> String {
        let url = URL(fileURLWithPath: file)
        let directory = url.deletingLastPathComponent().path
        do {
            let prefix = try await git(["rev-parse", "--show-prefix"], in: directory)
            return prefix + url.lastPathComponent
        } catch {
            throw CommandFailure.input(
                "--against git:… reads the recipe's repository, and \(file) is in none: \(error)")
        }
    }

    /// Whether `path` (relative to the root) is a file at `commit`.
    static func hasFile(_ path: String, commit: String, root: String) async -> Bool {
        (try? await git(["cat-file", "-e", "\(commit):\(path)"], in: root)) != nil
    }

    /// Writes the files of `commit` to a new temporary folder.
    /// - Throws: `CommandFailure` when git cannot write them.
    static func checkOut(revision: String, commit: String, root: String) async throws -> GitRevisionTree {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharelane-against-\(UUID().uuidString)", isDirectory: true)
        var tree = GitRevisionTree(revision: revision, commit: commit, repositoryRoot: root, folder: folder)
        do {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("files"), withIntermediateDirectories: true)
            // An index of its own: reading a revision must not touch what the user has staged.
            let index = ["GIT_INDEX_FILE": folder.appendingPathComponent("index").path]
            _ = try await git(["read-tree", commit], in: root, environment: index)
            _ = try await git(
                ["checkout-index", "--all", "--force", "--prefix=\(tree.files.path)/"], in: root, environment: index)
        } catch {
            tree.remove()
            throw CommandFailure.input("--against git:\(revision): cannot write out its files: \(error)")
        }
        tree.linksLeaving = tree.removeLinksLeaving()
        return tree
    }

    /// Removes the symbolic links among the revision's files that lead out of them, as a checkout resolves
    /// links (`evil.yaml -> /etc/passwd`, `../../secret`, or a path into the working tree, which is not the
    /// revision): nothing outside the revision is ever read or quoted. A link within it stays.
    /// - Returns: the paths of the links removed, from the root.
    func removeLinksLeaving() -> [String] {
        let root = files.resolvingSymlinksInPath().path
        guard
            let walk = FileManager.default.enumerator(
                at: files, includingPropertiesForKeys: [.isSymbolicLinkKey], options: [])
        else { return [] }
        var removed: [String] = []
        for case let url as URL in walk {
            guard (try? url.resourceValues(forKeys: [.isSymbolicLinkKey]))?.isSymbolicLink == true else { continue }
            let relative = String(url.path.dropFirst(files.path.count + 1))
            if !Self.staysWithin(root, link: url) {
                try? FileManager.default.removeItem(at: url)
                removed.append(relative)
            }
        }
        return removed.sorted()
    }

    /// Whether a link, followed hop by hop, stays under `root` (a link to nothing there counts as within it:
    /// reading it fails there, as it would in a checkout).
    static func staysWithin(_ root: String, link: URL) -> Bool {
        var current = link
        for _ in 0..<40 {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current.path) else {
                return true
            }
            let next =
                target.hasPrefix("/")
                ? URL(fileURLWithPath: target)
                : current.deletingLastPathComponent().appendingPathComponent(target)
            // The folders on the way are the revision's (no link above a file leads out: each was checked).
            let resolved = next.deletingLastPathComponent().resolvingSymlinksInPath()
                .appendingPathComponent(next.lastPathComponent).standardizedFileURL
            guard resolved.path == root || resolved.path.hasPrefix(root + "/") else { return false }
            guard (try? resolved.resourceValues(forKeys: [.isSymbolicLinkKey]))?.isSymbolicLink == true else {
                return true
            }
            current = resolved
        }
        return false
    }

    /// The link out of the repository that `path` (from the root) is, or lies under, if any.
    func leavingLink(of path: String) -> String? {
        linksLeaving.first { path == $0 || path.hasPrefix($0 + "/") }
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
    static func git(_ arguments: [String], in directory: String, environment extra: [String: String] = [:])
        async throws -> String
    {
        var environment = ProcessInfo.processInfo.environment
        environment.merge(extra) { _, new in new }
        // The user's locale would translate git's messages, which are passed on.
        environment["LC_ALL"] = "C"
        let finished: ChildProcess.Finished
        do {
            finished = try await ChildProcess(
                ["git"] + arguments, environment: environment, directory: directory, ownGroup: false
            ).run(output: .collected(received: nil))
        } catch {
            throw GitFailure(message: "cannot run git: \(error)")
        }
        guard finished.status == 0 else {
            let said = String(decoding: finished.standardError, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw GitFailure(message: said.isEmpty ? "git \(arguments.first ?? "") failed" : said)
        }
        var text = String(decoding: finished.standardOutput, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}

/// What git said when it failed.
struct GitFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
