/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014): one 64-bit
/// state, the same numbers for the same seed on every machine and Swift version, which the standard library's
/// generators do not promise. Enough for deciding which request meets which fault; not for secrets.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (the slight lean of a remainder toward small numbers does not matter here).
    mutating func below(_ bound: Int) -> Int {
        bound <= 1 ? 0 : Int(next() % UInt64(bound))
    }
}
