import Emulator
import Foundation
import Logging
import ShareKit
import ShareStoreSQLite

/// `sharelane serve`'s emulator run in this process on a free loopback port, over a SQLite store.
public enum InProcessEmulator {
    /// Starts the emulator over `store`, runs `body` with its base URL (`http://127.0.0.1:PORT`), then stops
    /// it.
    ///
    /// - Throws: what `body` throws, or when the emulator cannot start.
    public static func with<T: Sendable>(
        store: SQLiteStore, apiToken: String, tokenLifetime: Duration = .seconds(3600), maxBodyBytes: Int = 16 << 20,
        clock: EmulatorClock = .system,
        logger: Logger = Logger(label: "sharelane.test") { _ in SwiftLogNoOpLogHandler() },
        _ body: @Sendable (String) async throws -> T
    ) async throws -> T {
        try await with(
            store: store,
            configuration: EmulatorConfiguration(
                host: "127.0.0.1", port: 0, apiToken: apiToken, tokenLifetime: tokenLifetime,
                maxBodyBytes: maxBodyBytes,
                clock: clock),
            logger: logger, body)
    }

    /// Starts the emulator over `store` with `configuration` (its port replaced by a free one) on `host` (an
    /// IPv4 address of this machine; loopback unless a test needs a caller from elsewhere), runs `body` with
    /// its base URL, then stops it.
    public static func with<T: Sendable>(
        store: SQLiteStore, configuration: EmulatorConfiguration,
        logger: Logger = Logger(label: "sharelane.test") { _ in SwiftLogNoOpLogHandler() }, host: String = "127.0.0.1",
        _ body: @Sendable (String) async throws -> T
    ) async throws -> T {
        var configuration = configuration
        configuration.host = host
        configuration.port = 0
        // The store's own world is the one its requests' paths name (the default container unless the store
        // was opened for another); every other container and environment starts empty beside it.
        let emulator = CloudKitEmulator(worlds: store.worlds, configuration: configuration, logger: logger)
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
            return try await body("http://\(host):\(port)")
        }
    }
}
