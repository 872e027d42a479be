import ShareKit
import ShareStoreSQLite

/// What a world other than a case's holds: one user, one zone and one record, read back whole.
struct Bystander: Hashable, Sendable, CustomStringConvertible {
    static let email = "bystander@example.com"
    static let zone = ZoneID(zoneName: "Bystander")

    var users: [String]
    var zones: [String]
    var records: [String]

    var description: String { "users \(users), zones \(zones), records \(records)" }

    /// Seeds a world with the bystander's data and answers it as read back.
    static func seed(_ store: SQLiteStore) async throws -> Bystander {
        let user = try await store.signIn(email: email, name: "Bystander").recordName
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: user)
        _ = try await store.modifyRecords(
            [RecordOperation(.create, Record(recordName: "kept", recordType: "Note", zoneID: zone))], in: zone,
            database: .private, atomic: false, as: user)
        return try await read(store)
    }

    /// Every user of the world, the bystander's zones, and the records of its zone with their change tags.
    static func read(_ store: SQLiteStore) async throws -> Bystander {
        let users = try await store.allUsers()
        let user = StableName.userRecordName(email: email)
        guard users.contains(where: { $0.recordName == user }) else {
            return Bystander(users: users.compactMap(\.email), zones: [], records: [])
        }
        let zones = try await store.listZones(in: .private, as: user).map(\.zoneID.zoneName).sorted()
        let records = try await store.wholeZone(zone, in: .private, as: user).records.map {
            "\($0.recordName) \($0.changeTag ?? "")"
        }.sorted()
        return Bystander(users: users.compactMap(\.email), zones: zones, records: records)
    }
}
