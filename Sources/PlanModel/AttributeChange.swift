/// One attribute of a planned change, before and after: a record field, or a property such as a record's
/// type, a share's title or a participant's permission.
public struct AttributeChange: Sendable, Hashable, Codable {
    /// The field or property name (`title`, `public_permission`, `accepted`).
    public var name: String
    /// Whether `name` is a record field rather than a property of the thing changed.
    public var isField: Bool
    /// nil when the attribute does not exist before the change.
    public var before: PlannedValue?
    /// nil when the attribute is removed by the change.
    public var after: PlannedValue?

    public init(name: String, isField: Bool, before: PlannedValue?, after: PlannedValue?) {
        self.name = name
        self.isField = isField
        self.before = before
        self.after = after
    }
}
