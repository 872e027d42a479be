/// The counts of a plan: things to add, change and destroy.
public struct PlanSummary: Sendable, Hashable, Codable {
    public var add: Int
    public var change: Int
    public var destroy: Int

    public init(add: Int, change: Int, destroy: Int) {
        self.add = add
        self.change = change
        self.destroy = destroy
    }

    /// `Plan: N to add, M to change, K to destroy.`
    public var line: String { "Plan: \(add) to add, \(change) to change, \(destroy) to destroy." }
}
