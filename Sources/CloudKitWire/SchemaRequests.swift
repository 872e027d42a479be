import ShareKit

/// The body of `schema/lookup`'s answer and of `schema/extend`'s request: `{schema: {recordTypes: […]}}`.
package struct SchemaResponse: Codable, Sendable, Hashable {
    package var schema: Schema

    package init(schema: Schema) { self.schema = schema }
}

/// The answer of `schema/extend` and `schema/deploy`: what changed.
package struct SchemaChangesResponse: Codable, Sendable, Hashable {
    package var changes: [SchemaChange]

    package init(changes: [SchemaChange]) { self.changes = changes }
}
