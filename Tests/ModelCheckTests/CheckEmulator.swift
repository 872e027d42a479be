import Foundation
import ShareStoreSQLite
import SharelaneTestSupport

/// `sharelane serve`'s emulator run in this process on a free loopback port, over a SQLite file, for the
/// length of a check run.
enum CheckEmulator {
    static let apiToken = "model-check-token"

    /// Starts the emulator over `store`, runs `body` with its base URL, then stops it.
    static func with<T: Sendable>(store: SQLiteStore, _ body: @Sendable (String) async throws -> T) async throws -> T {
        try await InProcessEmulator.with(store: store, apiToken: apiToken, logger: CaseRunner.logger, body)
    }
}
