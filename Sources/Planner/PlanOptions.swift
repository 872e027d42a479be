import PlanModel

/// How to plan: whether to prune, which zones and addresses, and whether to plan the recipe's removal.
public struct PlanOptions: Sendable, Hashable, Codable {
    /// Delete undeclared records and fields in every declared zone, as `prune: true` on each zone does.
    public var prune: Bool
    /// Plan only these zones (and then no public records); empty plans everything the recipe declares.
    public var onlyZones: [String]
    /// Plan the removal of everything the recipe declares and owns (`sharelane destroy`): each declared
    /// zone, with every record and share in it, and each declared public record.
    public var destroy: Bool
    /// Plan only these addresses and what they need (`--target`); empty plans everything.
    public var targets: [String]
    /// Where the last plan's memo is kept, for an incremental plan; nil reads every zone and keeps nothing.
    public var cache: PlanCache?

    public init(
        prune: Bool = false, onlyZones: [String] = [], destroy: Bool = false, targets: [String] = [],
        cache: PlanCache? = nil
    ) {
        self.cache = cache
        self.prune = prune
        self.onlyZones = onlyZones
        self.destroy = destroy
        self.targets = targets
    }
}
