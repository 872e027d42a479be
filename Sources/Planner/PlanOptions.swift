/// How to plan: whether to prune, and which zones.
public struct PlanOptions: Sendable, Hashable, Codable {
    /// Delete undeclared records and fields in every declared zone, as `prune: true` on each zone does.
    public var prune: Bool
    /// Plan only these zones (and then no public records); empty plans everything the recipe declares.
    public var onlyZones: [String]

    public init(prune: Bool = false, onlyZones: [String] = []) {
        self.prune = prune
        self.onlyZones = onlyZones
    }
}
