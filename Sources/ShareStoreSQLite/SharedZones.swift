import GRDB
import ShareKit

/// What a user's shared database holds: the zones of others in which the user accepted a share.
enum SharedZones {
    /// Zones in which `user` accepted a share that still grants access, changed after `since` when given.
    static func visible(to user: UserRecordName, since: Int64?, db: Database) throws -> [ZoneRow] {
        var sql = """
            SELECT DISTINCT z.id, z.scope, z.owner, z.name, z.seq
            FROM zone z
            JOIN participant p ON p.zoneId = z.id
            JOIN share s ON s.zoneId = p.zoneId AND s.name = p.shareName
            WHERE p.user = ? AND p.acceptance = 'ACCEPTED' AND z.owner != ?
              AND (p.role != 'PUBLIC_USER' OR s.publicPermission != 'NONE')
            """
        var arguments: StatementArguments = [user, user]
        if let since {
            sql += " AND z.seq > ?"
            arguments += [since]
        }
        sql += " ORDER BY z.name, z.owner"
        return try ZoneRow.fetchAll(db, sql: sql, arguments: arguments)
    }

    /// The share with this short GUID, named as its owner names it, and its zone's row id.
    /// - Throws: `ShareError` (`NOT_FOUND`) when no share has it.
    static func share(shortGUID: String, url: String, db: Database) throws -> (Share, Int64) {
        // Cached statements: an apply accepts a thousand shares, and preparing costs more than the query.
        guard
            let row = try ShareRow.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM share WHERE shortGUID = ?"), arguments: [shortGUID]),
            let zone = try ZoneRow.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM zone WHERE id = ?"), arguments: [row.zoneId])
        else {
            throw ShareError(
                .notFound, "no share has the URL or short GUID '\(url)'; check the URL, or the share was deleted",
                subject: url)
        }
        let participants = try ParticipantLoader.load(zoneId: row.zoneId, db: db)
        let zoneID = ZoneID(zoneName: zone.name, ownerRecordName: zone.owner)
        return (
            ShareMapping.share(row, participants: participants[row.name] ?? [], owner: zone.owner, zoneID: zoneID),
            row.zoneId
        )
    }
}
