import Dispatch
import Foundation

/// Work split in parts run on every core at once, for the few steps of a large recipe's plan and apply that
/// would otherwise keep one core busy while the other waits.
package enum OnEveryCore {
    /// How many cores there are to run on.
    package static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The fewest zones worth a part of their own (decoding, checking or digesting a recipe's zones): fewer
    /// are done in one piece.
    package static let zonesPerPart = 8

    /// `body` of each index in `0..<count`, run at once on every core (`DispatchQueue.concurrentPerform`),
    /// in index order. Each call must touch only what is its own (its part, its own slot of the result) and
    /// read what is shared.
    package static func map<T>(_ count: Int, _ body: (Int) -> T) -> [T] {
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

    /// `0..<count` in parts of nearly equal size, in order: one a core (at most `cores`), each of at least
    /// `minimum` items; one part when there is too little to share.
    package static func parts(of count: Int, atLeast minimum: Int, cores: Int = OnEveryCore.cores) -> [Range<Int>] {
        let parts = max(min(cores, count / max(minimum, 1)), 1)
        let size = (count + parts - 1) / parts
        return size == 0 ? [] : stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }
}

/// What the parts of `OnEveryCore.map` share: each reads it, or writes only its own slot.
private struct SharedWithParts<Value>: @unchecked Sendable {
    let value: Value
}
