import Foundation

/// The bytes of a JSON body being written by `WireRecordWriter`. Appending a byte is a capacity check and a
/// store: an array checks on every append whether its buffer is shared and must be copied, and those checks
/// were a third of writing a 200-record answer. Not copyable, so its buffer has one owner, which
/// frees it.
package struct JSONOutput: ~Copyable {
    private var base: UnsafeMutableRawPointer
    /// How many bytes are written.
    package private(set) var count = 0
    private var capacity: Int

    package init(capacity: Int) {
        self.capacity = max(capacity, 64)
        guard let base = malloc(self.capacity) else { fatalError("out of memory for a body of \(capacity) bytes") }
        self.base = base
    }

    deinit { free(base) }

    /// Makes room for `capacity` bytes in all, so that appending up to there does not move the buffer.
    mutating func reserveCapacity(_ capacity: Int) {
        if capacity > self.capacity { grow(to: capacity) }
    }

    private mutating func grow(to needed: Int) {
        let capacity = max(needed, self.capacity * 2)
        guard let moved = realloc(base, capacity) else { fatalError("out of memory for a body of \(capacity) bytes") }
        base = moved
        self.capacity = capacity
    }

    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends any bytes: in one copy when they are contiguous (a `String`'s UTF-8, `Data`), one by one if not.
    mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(contentsOf: UnsafeRawBufferPointer($0)) }
        if copied == nil { for byte in bytes { append(byte) } }
    }

    /// Takes back everything written from `start` on.
    mutating func truncate(to start: Int) {
        precondition(start >= 0 && start <= count, "truncating a body of \(count) bytes to \(start)")
        count = start
    }

    /// The bytes written, valid only inside `body`.
    package func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The bytes written, copied.
    package var data: Data { Data(bytes: base, count: count) }
}
