import ArgumentParser
import Foundation
import ShareStoreSQLite

/// `--lock-timeout DURATION`, for the commands that write to a store.
struct LockOptions: ParsableArguments {
    @Option(
        name: .customLong("lock-timeout"),
        help: ArgumentHelp(
            "How long to wait for another sharelane process to release a local store (0s, 30s, 2m).",
            discussion: "A sqlite: store is locked while a command writes to it; memory: and remote stores are not.",
            valueName: "duration"))
    var lockTimeout = TimeLimit(seconds: 5)

    /// Takes the lock of the store at `url` when it is a local file, for `operation`; nil for other stores.
    /// Says on standard error when it waits.
    /// - Throws: `CommandFailure` naming the holder when the lock stays held past `--lock-timeout`.
    func lock(_ url: String, operation: String) async throws -> StoreLock? {
        guard case .sqlite(let path) = try? StoreLocator.location(of: url) else { return nil }
        // Not even a lock file beside another program's database.
        if let refusal = StoreFile.refusal(at: path, url: url) { throw CommandFailure.input(refusal) }
        let timeout = lockTimeout
        do {
            return try await StoreLock.acquire(storePath: path, operation: operation, timeout: timeout) { holder in
                let who = holder.map { "process \($0.pid) (\($0.operation), since \($0.created))" } ?? "another process"
                Terminal.printError("Waiting up to \(timeout) for the store lock on sqlite:\(path), held by \(who)…")
            }
        } catch {
            throw CommandFailure.conflict("\(error)")
        }
    }
}
