import Foundation
import Synchronization

/// A thread-safe count of HTTP requests, for benchmarks and tests.
final class RequestCounter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func increment() { count.withLock { $0 += 1 } }
}
