import Foundation

/// A thread-safe holder of a `TextOutputStream`, such as a `String` a test reads after the run.
public final class StreamBox<S: TextOutputStream & Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stream: S

    public init(_ stream: S) {
        self.stream = stream
    }

    /// Appends text to the stream.
    public func append(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        stream.write(text)
    }

    /// The stream as it is now.
    public var value: S {
        lock.lock()
        defer { lock.unlock() }
        return stream
    }
}
