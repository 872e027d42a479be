/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014): one 64-bit
/// state, the same numbers for the same seed on every machine and Swift version, which the standard library's
/// generators do not promise. The package's one seeded generator: generated recipe data, the emulator's fault
/// draws and the tests' seeded cases. Not for secrets.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The whole state: the next number follows from it alone.
    package var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
