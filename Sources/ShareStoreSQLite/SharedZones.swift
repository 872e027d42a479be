import GRDB
import ShareKit

/// What a user's shared database holds: the zones of others in which the user accepted a share.
enum SharedZones {
    /// Zones of others that `user` sees in its shared database, by zone name then owner.
    ///
    /// The query only selects candidates (zones of others with a share that names `user`); whether each one
    /// is visible is `AccessRules.isVisibleInSharedDatabase`'s decision, the same one that `zones/lookup` and
    /// `changes/zone` ask, so that every way of reaching the shared database agrees.
    static func visible(to user: UserRecordName, db: Database) throws -> [ZoneContext] {
        let sql = """
            SELECT DISTINCT z.* FROM zone z JOIN participant p ON p.zoneId = z.id
            WHERE p.user = ? AND z.owner != ? ORDER BY z.name, z.owner
            """
        return try ZoneRow.fetchAll(db, sql: sql, arguments: [user, user]).compactMap { row in
            do {
                let context = try ZoneContext.resolve(
                    ZoneID(zoneName: row.name, ownerRecordName: row.owner), scope: .shared, caller: user, db: db,
                    createDefault: false)
                return context.isVisibleInSharedDatabase ? context : nil
            } catch let error as ShareError where error.code == .zoneNotFound {
                // Invited, not accepted (or left): not in the shared database.
                return nil
            }
        }
    }

    /// The share with this short GUID, named as its owner names it, and its zone's row id.
    /// - Throws: `ShareError` (`NOT_FOUND`) when no share has it.
    /// A share's columns in `ShareRow.selection`'s order, then its zone's name and owner.
    private static let shareByGUID = """
        SELECT \(ShareRow.selection.split(separator: ", ").map { "s." + $0 }.joined(separator: ", ")), z.name, z.owner
        FROM share s JOIN zone z ON z.id = s.zoneId WHERE s.shortGUID = ?
        """

    static func share(shortGUID: String, url: String, db: Database) throws -> (Share, Int64) {
        // A cached statement read through SQLite's C API: an apply accepts a thousand shares, and preparing and
        // GRDB's rows cost more than the query.
        var select = DirectStatement(
            try db.cachedStatement(sql: shareByGUID))
        select.bind(shortGUID)
        var found: (row: ShareRow, zoneName: String, owner: String)?
        // The share's columns in `ShareRow.selection`'s order, then its zone's name and owner.
        try select.forEachRow { columns in
            found = (
                try ShareRow(columns), columns.string(ShareRow.columnCount), columns.string(ShareRow.columnCount + 1)
            )
            return false
        }
        guard let (row, zoneName, owner) = found else {
            throw ShareError(
                .notFound, "no share has the URL or short GUID '\(url)'; check the URL, or the share was deleted",
                subject: url)
        }
        let participants = try ParticipantLoader.load(zoneId: row.zoneId, shareName: row.name, db: db)
        let zoneID = ZoneID(zoneName: zoneName, ownerRecordName: owner)
        return (ShareMapping.share(row, participants: participants, owner: owner, zoneID: zoneID), row.zoneId)
    }
}
