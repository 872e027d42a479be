import ShareKit

/// A deterministic random stream for generated data: FNV-1a over the seed and a path, then SplitMix64.
///
/// Swift's `Hasher` is seeded per process, so it must never feed generated data; these functions give the
/// same numbers on every run and every machine.
struct StableRandom {
    private var generator: SplitMix64

    /// A stream that depends only on `seed` and `path` (such as `zones/Trips/day-3/fields/note#0`).
    init(seed: UInt64, path: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: seed >> UInt64(shift))) }
        mix(0xFF)
        for byte in path.utf8 { mix(byte) }
        generator = SplitMix64(seed: hash)
    }

    /// The stream of `path#occurrence` (the `occurrence`-th placeholder of a value), without building
    /// that text.
    init(seed: UInt64, path: String, occurrence: Int) {
        self.init(seed: seed, path: path)
        var hash = generator.state
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        mix(UInt8(ascii: "#"))
        for byte in String(occurrence).utf8 { mix(byte) }
        generator.state = hash
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 { generator.next() }

    /// A number in `0..<bound` (bound > 0).
    mutating func next(below bound: UInt64) -> UInt64 {
        // Rejection sampling keeps the distribution even.
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let value = next()
            if value < limit { return value % bound }
        }
    }

    /// A number in `range`.
    mutating func next(in range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        if span == 0 { return Int64(bitPattern: next()) }  // the whole Int64 range
        return range.lowerBound &+ Int64(bitPattern: next(below: span))
    }

    mutating func pick<T>(_ items: [T]) -> T {
        items[Int(next(below: UInt64(items.count)))]
    }
}
