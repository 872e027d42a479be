import Foundation
import GRDB
import ShareKit

// Zones: listing, looking up, creating and deleting them.
extension SQLiteStore {
    public func listZones(in database: DatabaseScope, as user: UserRecordName) async throws -> [Zone] {
        try Self.admit(user, .read, database)
        return try await read("listing zones") { db in
            switch database {
            case .public:
                return [Zone(zoneID: ZoneID(zoneName: defaultZoneName))]
            case .private:
                var names = try String.fetchAll(
                    db, sql: "SELECT name FROM zone WHERE scope = ? AND owner = ? ORDER BY name",
                    arguments: [DatabaseScope.private, user])
                if !names.contains(defaultZoneName) { names.insert(defaultZoneName, at: 0) }
                let zoneShares = try String.fetchSet(
                    db,
                    sql: """
                        SELECT z.name FROM share s JOIN zone z ON z.id = s.zoneId
                        WHERE z.scope = ? AND z.owner = ? AND s.root IS NULL
                        """, arguments: [DatabaseScope.private, user])
                return names.sorted().map {
                    Zone(
                        zoneID: ZoneID(zoneName: $0),
                        shareRecordName: zoneShares.contains($0) ? zoneShareRecordName : nil)
                }
            case .shared:
                return try SharedZones.visible(to: user, db: db).map(Self.zone)
            }
        }
    }

    static func zone(_ context: ZoneContext) -> Zone {
        let share = context.zoneShare.flatMap { share in
            context.scope != .shared
                || AccessRules.access(caller: context.caller, zoneOwner: context.owner, share: share).canRead
                ? share.recordName : nil
        }
        return Zone(zoneID: context.visibleZoneID, shareRecordName: share)
    }

    public func lookupZones(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    {
        try Self.admit(user, .read, database)
        return try await read("looking up zones") { db in
            try zoneIDs.map { zoneID in
                do {
                    let context = try ZoneContext.resolve(
                        zoneID, scope: database, caller: user, db: db, createDefault: false)
                    if database == .shared, !context.isVisibleInSharedDatabase {
                        return .failure(context.notShared())
                    }
                    return .success(Self.zone(context))
                } catch let error as ShareError {
                    return .failure(error)
                }
            }
        }
    }

    public func modifyZones(_ operations: [ZoneOperation], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [Result<Zone, ShareError>]
    {
        try Self.admit(user, .write, database)
        return try await write("modifying zones") { db in
            var results: [Result<Zone, ShareError>] = []
            for op in operations {
                let name = op.zoneID.zoneName
                guard database == .private else {
                    results.append(
                        .failure(
                            ShareError(
                                .badRequest, "zones are created and deleted in the private database only", subject: name
                            )))
                    continue
                }
                let owner = op.zoneID.ownerRecordName == defaultOwnerName ? user : op.zoneID.ownerRecordName
                guard owner == user else {
                    results.append(
                        .failure(
                            ShareError(.accessDenied, "only \(owner) creates or deletes their zones", subject: name)))
                    continue
                }
                if op.kind == .create, let problem = CloudKitLimits.zoneNameProblem(name) {
                    results.append(.failure(ShareError(.badRequest, problem, subject: name)))
                    continue
                }
                switch op.kind {
                case .create:
                    // Creating a zone that exists answers the zone, as CloudKit does.
                    _ = try ZoneContext.ensureZone(scope: .private, owner: user, name: name, db: db)
                    results.append(.success(Zone(zoneID: ZoneID(zoneName: name))))
                case .delete:
                    if name == defaultZoneName {
                        results.append(
                            .failure(ShareError(.badRequest, "the default zone cannot be deleted", subject: name)))
                        continue
                    }
                    guard
                        let row = try ZoneRow.all().privateZone(owner: user, name: name).fetchOne(db), let id = row.id
                    else {
                        results.append(
                            .failure(
                                ShareError(.zoneNotFound, "no zone \(name) in your private database", subject: name)))
                        continue
                    }
                    let losing = try String.fetchAll(
                        db, sql: "SELECT DISTINCT user FROM participant WHERE zoneId = ? AND acceptance = ?",
                        arguments: [id, AcceptanceStatus.accepted])
                    var sequence = try ChangeSequence.read(db)
                    for participant in losing {
                        try ZoneRemovalRow(
                            scope: .shared, user: participant, owner: user, zoneName: name, seq: sequence.next()
                        ).insert(db, onConflict: .replace)
                    }
                    try ZoneRemovalRow(scope: .private, user: user, owner: user, zoneName: name, seq: sequence.next())
                        .insert(db, onConflict: .replace)
                    try sequence.store(db)
                    try SubscriptionFiring.fireZoneChange(
                        zone: name, owner: user, participants: Set(losing), by: user, db: db)
                    // Records, shares, participants, references and tombstones go with the zone.
                    try db.execute(sql: "DELETE FROM participant WHERE zoneId = ?", arguments: [id])
                    try db.execute(sql: "DELETE FROM zone WHERE id = ?", arguments: [id])
                    results.append(.success(Zone(zoneID: ZoneID(zoneName: name))))
                }
            }
            return results
        }
    }
}
