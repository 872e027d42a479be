import Dispatch
import Foundation

/// Work split in parts run on every core at once, for the few steps of a large recipe's plan and apply that
/// would otherwise keep one core busy while the other waits (issue 18).
public enum OnEveryCore {
    /// How many cores there are to run on.
    public static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// `body` of each index in `0..<count`, run at once on every core (`DispatchQueue.concurrentPerform`),
    /// in index order. Each call must touch only what is its own (its part, its own slot of the result) and
    /// read what is shared.
    public static func map<T>(_ count: Int, _ body: (Int) -> T) -> [T] {
        withoutActuallyEscaping(body) { body in
            let shared = SharedWithParts(value: body)
            return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                let slots = SharedWithParts(value: base)
                DispatchQueue.concurrentPerform(iterations: count) { index in
                    (slots.value + index).initialize(to: shared.value(index))
                }
                initialized = count
            }
        }
    }

    /// The ranges of `0..<count` in `parts` parts of nearly equal size, in order.
    public static func ranges(of count: Int, parts: Int) -> [Range<Int>] {
        let size = (count + max(parts, 1) - 1) / max(parts, 1)
        return size == 0 ? [] : stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }
}

/// What the parts of `OnEveryCore.map` share: each reads it, or writes only its own slot.
private struct SharedWithParts<Value>: @unchecked Sendable {
    let value: Value
}
