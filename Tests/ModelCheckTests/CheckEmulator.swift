import Foundation
import ShareStoreSQLite
import SharelaneTestSupport

/// `sharelane serve`'s emulator run in this process on a free loopback port, over a SQLite file, for the
/// length of a check run.
enum CheckEmulator {
    static let apiToken = "model-check-token"

    /// Starts the emulator over `store`, runs `body` with its base URL, then stops it.
    /// `clock` is what its tokens expire by and its throttle counts by (the checker's client waits on it too).
    static func with<T: Sendable>(
        store: SQLiteStore, clock: MovableClock, _ body: @Sendable (String) async throws -> T
    ) async throws -> T {
        try await InProcessEmulator.with(
            store: store, apiToken: apiToken, clock: clock.emulatorClock, logger: CaseRunner.logger, body)
    }
}
