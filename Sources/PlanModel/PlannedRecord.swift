import ShareKit

/// A record as a change writes it.
public struct PlannedRecord: Sendable, Hashable, Codable {
    public var recordType: String
    public var parent: String?
    /// For `create` and `replace`, every field the record will have; for `update`, the fields that change.
    public var fields: [String: PlannedValue]
    /// `create`, `update` (named fields only) or `replace` (fields not listed are removed).
    public var operation: OperationKind

    public init(recordType: String, parent: String?, fields: [String: PlannedValue], operation: OperationKind) {
        self.recordType = recordType
        self.parent = parent
        self.fields = fields
        self.operation = operation
    }
}
