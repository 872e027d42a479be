import CloudKitWire
import Foundation
import Hummingbird
import ShareKit

// sharelane's own schema operations: `schema/lookup`, `schema/extend`, `schema/deploy`.
extension EmulatorService {
    func schema(_ operation: WireOperation, _ call: OperationCall) async throws -> ByteBuffer {
        let store = call.store
        switch operation {
        case .schemaExtend:
            let request = try decode(SchemaResponse.self, from: call.body)
            guard store.environment == .development else {
                throw ShareError(
                    .badRequest,
                    "the production schema changes only by deploying development's (schema/deploy), as in the "
                        + "CloudKit Console")
            }
            return try encode(
                SchemaChangesResponse(changes: try await store.extendSchema(request.schema, as: call.user)))
        case .schemaDeploy:
            if !call.body.isEmpty { _ = try decode(NoMembers.self, from: call.body) }
            return try encode(SchemaChangesResponse(changes: try await store.deploySchema(as: call.user)))
        default:
            return try encode(SchemaResponse(schema: try await store.schema(in: store.environment, as: call.user)))
        }
    }
}
