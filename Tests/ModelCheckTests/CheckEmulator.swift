import Emulator
import Foundation
import Logging
import ShareKit
import ShareStoreSQLite

/// `sharelane serve`'s emulator run in this process on a free loopback port, over a SQLite file, for the
/// length of a check run.
enum CheckEmulator {
    static let apiToken = "model-check-token"

    /// Starts the emulator over `store`, runs `body` with its base URL, then stops it.
    static func with<T: Sendable>(store: SQLiteStore, _ body: @Sendable (String) async throws -> T) async throws -> T {
        let emulator = CloudKitEmulator(
            store: store,
            configuration: EmulatorConfiguration(
                host: "127.0.0.1", port: 0, apiToken: apiToken, tokenLifetime: .seconds(3600), maxBodyBytes: 16 << 20),
            logger: CaseRunner.logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = emulator.application { port in
            continuation.yield(port)
            continuation.finish()
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                group.cancelAll()
                throw ShareError(.internalError, "the emulator did not start")
            }
            defer { group.cancelAll() }
            return try await body("http://127.0.0.1:\(port)")
        }
    }
}
