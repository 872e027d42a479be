/// A seeded SplitMix64 generator: the same seed gives the same case, action by action, on every machine.
///
/// The checker draws from its own generator rather than from swift-property-based's `Gen`: a case here is a
/// recipe plus a sequence of actions whose validity depends on the state the earlier actions left (a
/// participant can only leave a share the recipe still declares, a mutation must keep the recipe valid),
/// and shrinking has to replay the sequence against real stores. A plain generator with a domain-aware
/// shrinker (`CaseShrinker`) fits that stateful problem better than value-level generators and shrinking.
struct CheckRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A whole number in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// One of `items`, which must not be empty.
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// One of `items`, or nil when there are none.
    mutating func maybePick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : pick(items) }

    /// The seed of case `index` of a run started from `seed`: cases are independent, so one can be rerun alone.
    static func caseSeed(run seed: UInt64, index: Int) -> UInt64 {
        var generator = CheckRandom(seed: seed ^ (UInt64(index) &* 0xA24B_AED4_963E_E407))
        return generator.next()
    }
}
