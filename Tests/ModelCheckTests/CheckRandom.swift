import ShareKit

/// A seeded generator (ShareKit's `SplitMix64`): the same seed gives the same case, action by action, on
/// every machine.
///
/// The checker draws from its own generator rather than from swift-property-based's `Gen`: a case here is a
/// recipe plus a sequence of actions whose validity depends on the state the earlier actions left (a
/// participant can only leave a share the recipe still declares, a mutation must keep the recipe valid),
/// and shrinking has to replay the sequence against real stores. A plain generator with a domain-aware
/// shrinker (`CaseShrinker`) fits that stateful problem better than value-level generators and shrinking.
struct CheckRandom: RandomNumberGenerator {
    private var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }

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
