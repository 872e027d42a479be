import Foundation
import ShareKit

// The schema and maintenance over Web Services: `schema/lookup`, `schema/extend`, `schema/deploy`, and the
// reset only local stores offer.
extension WebServicesStore {
    public var environment: CloudKitEnvironment { WireSpelling.environment(endpoint.environment) ?? .development }

    public func inEnvironment(_ environment: CloudKitEnvironment) -> any Store {
        environment == self.environment ? self : WebServicesStore(sharing: self, environment: environment)
    }

    public func schema(in environment: CloudKitEnvironment, as user: UserRecordName) async throws -> Schema {
        try requireSchemaOperations()
        guard environment == self.environment else {
            return try await inEnvironment(environment).schema(in: environment, as: user)
        }
        let response: SchemaResponse = try await send(.schemaLookup, database: .public, body: nil as String?, as: user)
        return response.schema
    }

    public func extendSchema(_ schema: Schema, as user: UserRecordName) async throws -> [SchemaChange] {
        try requireSchemaOperations()
        guard environment == .development else {
            return try await inEnvironment(.development).extendSchema(schema, as: user)
        }
        let response: SchemaChangesResponse = try await send(
            .schemaExtend, database: .public, body: SchemaResponse(schema: schema), as: user)
        return response.changes
    }

    public func deploySchema(as user: UserRecordName) async throws -> [SchemaChange] {
        try requireSchemaOperations()
        let response: SchemaChangesResponse = try await send(
            .schemaDeploy, database: .public, body: [String: String](), as: user)
        return response.changes
    }

    /// Apple's schema lives outside Web Services: refuse with what to use instead.
    private func requireSchemaOperations() throws {
        guard endpoint.kind == .emulator else {
            throw ShareError(
                .badRequest,
                "\(displayName) does not serve schemas over Web Services: export Apple's with "
                    + "`xcrun cktool export-schema`, import a .ckdb from `sharelane schema export` with "
                    + "`xcrun cktool import-schema`, and deploy in the CloudKit Console")
        }
    }

    /// Empties this container's world in `sharelane serve` through its fixture call (`POST /_sharelane/reset`
    /// with `"to": "empty"`, the API token as every call has it); other worlds keep what they hold.
    /// - Throws: `ShareError` on Apple's service, which cannot be emptied from here.
    public func reset() async throws {
        guard endpoint.kind == .emulator else {
            throw ShareError(
                .badRequest,
                "\(displayName) cannot be reset from here: reset works on local stores (sqlite:, memory:) and on "
                    + "`sharelane serve`; empty the container in the CloudKit Console instead")
        }
        struct Body: Encodable, Sendable {
            var container: String
            var environment: String
            var to = "empty"
        }
        struct Answer: Decodable { var reset: [String] }
        let _: Answer = try await send(
            path: "/_sharelane/reset", body: Body(container: endpoint.container, environment: endpoint.environment),
            auth: .apiTokenOnly)
    }
}
