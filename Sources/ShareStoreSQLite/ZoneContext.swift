import GRDB
import ShareKit

/// A zone as one caller reaches it in one database: the zone's row, its real owner, the zone ID to hand
/// back, and its shares with their participants.
struct ZoneContext {
    var zone: ZoneRow
    var zoneId: Int64
    var scope: DatabaseScope
    var caller: UserRecordName
    /// The zone's real owner; empty for the public database.
    var owner: UserRecordName
    /// The zone ID as the caller names it: `__defaultOwner__` in the private and public databases, the owner's
    /// record name in the shared database.
    var visibleZoneID: ZoneID
    var zoneShare: Share?
    var sharesByRoot: [String: Share] = [:]
    var sharesByName: [String: Share] = [:]
    /// Whether the zone row exists (the private default zone exists implicitly until first written).
    var exists: Bool

    var isOwner: Bool { scope == .private }

    /// The share that covers a record in its current place.
    func coveringShare(shareRoot: String?) -> Share? {
        if let zoneShare { return zoneShare }
        guard let shareRoot else { return nil }
        return sharesByRoot[shareRoot]
    }

    /// Whether the caller may read a record whose hierarchy root is `shareRoot`.
    func canRead(shareRoot: String?) -> Bool {
        switch scope {
        case .private, .public: return true
        case .shared:
            return AccessRules.access(caller: caller, zoneOwner: owner, share: coveringShare(shareRoot: shareRoot))
                .canRead
        }
    }

    /// Shares the caller may read; in the shared database, those it accepted.
    var readableShares: [Share] {
        sharesByName.values.filter { share in
            scope != .shared || AccessRules.access(caller: caller, zoneOwner: owner, share: share).canRead
        }.sorted { $0.recordName < $1.recordName }
    }

    /// The caller sees the zone in its shared database (it accepted a share in it).
    var isVisibleInSharedDatabase: Bool {
        sharesByName.values.contains {
            AccessRules.isVisibleInSharedDatabase(caller: caller, zoneOwner: owner, share: $0)
        }
    }

    /// The roots of the hierarchies the caller may read, or nil when it may read the whole zone.
    var readableRoots: Set<String>? {
        if scope != .shared { return nil }
        if let zoneShare, AccessRules.access(caller: caller, zoneOwner: owner, share: zoneShare).canRead { return nil }
        return Set(
            sharesByRoot.filter { AccessRules.access(caller: caller, zoneOwner: owner, share: $0.value).canRead }.keys)
    }

    /// Resolves `zoneID` in `scope` for `caller`.
    /// - Throws: `ShareError`: `ZONE_NOT_FOUND` (in the shared database also for a zone the caller accepted no
    ///   share of: `AccessRules.mayReach`), or `ACCESS_DENIED` for someone else's zone in the private
    ///   database.
    /// - Parameter leaving: the caller leaves one of the zone's shares (`AccessRules.mayKnowOf`).
    static func resolve(
        _ zoneID: ZoneID, scope: DatabaseScope, caller: UserRecordName, db: Database, createDefault: Bool,
        leaving: Bool = false
    ) throws -> ZoneContext {
        switch scope {
        case .public:
            guard zoneID.zoneName == defaultZoneName,
                let row = try ZoneRow.all().publicZone().fetchOne(db), let id = row.id
            else {
                throw ShareError(
                    .zoneNotFound, "the public database has only the zone \(defaultZoneName)", subject: zoneID.zoneName)
            }
            return ZoneContext(
                zone: row, zoneId: id, scope: scope, caller: caller, owner: ZoneRow.publicOwner,
                visibleZoneID: ZoneID(zoneName: defaultZoneName), exists: true)
        case .private:
            let owner = zoneID.ownerRecordName == defaultOwnerName ? caller : zoneID.ownerRecordName
            guard owner == caller else {
                throw ShareError(
                    .accessDenied,
                    "zones of \(owner) are not in the private database of \(caller); reach a shared zone through the shared database",
                    subject: zoneID.zoneName)
            }
            var row = try ZoneRow.fetchOne(db, scope: .private, owner: owner, name: zoneID.zoneName)
            var exists = row != nil
            if row == nil {
                guard zoneID.zoneName == defaultZoneName else {
                    throw ShareError(
                        .zoneNotFound,
                        "no zone \(zoneID.zoneName) in the private database of \(caller); create it first",
                        subject: zoneID.zoneName)
                }
                if createDefault {
                    row = try ensureZone(scope: .private, owner: owner, name: defaultZoneName, db: db)
                    exists = true
                } else {
                    row = ZoneRow(id: -1, scope: .private, owner: owner, name: defaultZoneName, seq: 0)
                }
            }
            guard let row, let id = row.id else {
                throw ShareError(.internalError, "zone without an id", subject: zoneID.zoneName)
            }
            var context = ZoneContext(
                zone: row, zoneId: id, scope: scope, caller: caller, owner: owner,
                visibleZoneID: ZoneID(zoneName: zoneID.zoneName), exists: exists)
            try context.loadShares(db)
            return context
        case .shared:
            let owner = zoneID.ownerRecordName
            guard owner != defaultOwnerName, owner != caller else {
                throw ShareError(
                    .zoneNotFound,
                    "the shared database names a zone by its owner's user record name; your own zones are in your private database",
                    subject: zoneID.zoneName)
            }
            guard
                let row = try ZoneRow.fetchOne(db, scope: .private, owner: owner, name: zoneID.zoneName),
                let id = row.id
            else {
                throw notShared(zoneID, owner: owner, caller: caller, shares: nil)
            }
            var context = ZoneContext(
                zone: row, zoneId: id, scope: scope, caller: caller, owner: owner,
                visibleZoneID: ZoneID(zoneName: zoneID.zoneName, ownerRecordName: owner), exists: true)
            try context.loadShares(db)
            // Every operation reaches someone's zone through here: one not in the caller's shared database
            // answers as a missing zone does, for writes as for reads, so no refusal tells what exists. Leaving
            // asks only that the caller was invited, so that an invitation can be declined.
            let shares = context.sharesByName.values
            let reached =
                leaving
                ? AccessRules.mayKnowOf(caller: caller, zoneOwner: owner, shares: shares)
                : AccessRules.mayReach(caller: caller, zoneOwner: owner, shares: shares)
            guard reached else { throw notShared(zoneID, owner: owner, caller: caller, shares: Array(shares)) }
            return context
        }
    }

    /// The refusal of a shared-database request about a zone the caller cannot see there: the same code and
    /// words whether the zone is missing or is someone's zone not shared with the caller
    /// (`AccessRules.unknownZone`), so that a refusal tells a stranger nothing of what exists.
    ///
    /// - Parameter shares: the zone's shares; nil when the zone does not exist. They say why, for the store's
    ///   keeper only (`ShareError.insight`).
    static func notShared(
        _ zoneID: ZoneID, owner: UserRecordName, caller: UserRecordName, shares: [Share]?
    ) -> ShareError {
        let insight =
            shares.map {
                AccessRules.unreachedZoneInsight(zoneID.zoneName, owner: owner, caller: caller, shares: $0)
            } ?? "\(owner) has no zone \(zoneID.zoneName)"
        return AccessRules.unknownZone(zoneID.zoneName, owner: owner, caller: caller, insight: insight)
    }

    /// `notShared` for this zone, which exists: the caller accepted none of its shares.
    func notShared() -> ShareError {
        Self.notShared(visibleZoneID, owner: owner, caller: caller, shares: Array(sharesByName.values))
    }

    /// The refusal of a record the caller may not read: as if it were missing (`AccessRules.unknownRecord`).
    /// - Parameter hidden: the record exists and the caller may not read it (for the store's keeper only).
    func unknownRecord(_ name: String, subject: String, hidden: Bool) -> ShareError {
        let zone = scope == .shared ? "\(owner)'s zone \(zone.name)" : "the zone \(zone.name)"
        let insight =
            hidden
            ? "\(name) in \(zone) is outside every hierarchy shared with \(caller)"
            : "no record named \(name) in \(zone)"
        return AccessRules.unknownRecord(name, subject: subject, insight: insight)
    }

    /// The zone row, created if missing.
    static func ensureZone(scope: DatabaseScope, owner: String, name: String, db: Database) throws -> ZoneRow {
        var sequence = try ChangeSequence.read(db)
        let row = try ensureZone(scope: scope, owner: owner, name: name, db: db, sequence: &sequence)
        try sequence.store(db)
        return row
    }

    /// `ensureZone` taking its number from `sequence`, which the caller stores: signing in 100,000 users read
    /// and wrote the counter for each.
    static func ensureZone(
        scope: DatabaseScope, owner: String, name: String, db: Database, sequence: inout ChangeSequence
    ) throws -> ZoneRow {
        if let row = try ZoneRow.fetchOne(db, scope: scope, owner: owner, name: name) {
            return row
        }
        let seq = sequence.next()
        // Through SQLite's C API: an apply creates zones and signs users in (each with a zone) by the hundred.
        try DirectStatement.run("INSERT INTO zone (scope, owner, name, seq) VALUES (?, ?, ?, ?)", in: db) {
            $0.bind(scope)
            $0.bind(owner)
            $0.bind(name)
            $0.bind(seq)
        }
        return ZoneRow(id: db.lastInsertedRowID, scope: scope, owner: owner, name: name, seq: seq)
    }

    /// Reloads the zone's shares and participants.
    mutating func loadShares(_ db: Database) throws {
        zoneShare = nil
        sharesByRoot = [:]
        sharesByName = [:]
        guard zoneId >= 0 else { return }
        var select = DirectStatement(
            try db.cachedStatement(sql: "SELECT \(ShareRow.selection) FROM share WHERE zoneId = ?"))
        select.bind(zoneId)
        var shares: [ShareRow] = []
        try select.forEachRow { row in
            shares.append(try ShareRow(row))
            return true
        }
        guard !shares.isEmpty else { return }
        let participants = try ParticipantLoader.load(zoneId: zoneId, db: db)
        for row in shares {
            let share = ShareMapping.share(
                row, participants: participants[row.name] ?? [], owner: owner, zoneID: visibleZoneID)
            sharesByName[row.name] = share
            if let root = row.root { sharesByRoot[root] = share } else { zoneShare = share }
        }
    }
}

/// Reads participants with the email and name of their users.
enum ParticipantLoader {
    /// The participants of every share of a zone, by share name.
    static func load(zoneId: Int64, db: Database) throws -> [String: [Participant]] {
        var select = DirectStatement(
            try db.cachedStatement(sql: "\(selection) WHERE p.zoneId = ? ORDER BY p.shareName, p.position"))
        select.bind(zoneId)
        return try participants(select)
    }

    /// The participants of one share: accepting a share reads only its own (a zone of 100 hierarchy shares
    /// would otherwise be read whole for each acceptance).
    static func load(zoneId: Int64, shareName: String, db: Database) throws -> [Participant] {
        var select = DirectStatement(
            try db.cachedStatement(sql: "\(selection) WHERE p.zoneId = ? AND p.shareName = ? ORDER BY p.position"))
        select.bind(zoneId)
        select.bind(shareName)
        return try participants(select)[shareName] ?? []
    }

    private static let selection = """
        SELECT p.shareName, p.user, p.role, p.permission, p.acceptance, u.email, u.name
        FROM participant p LEFT JOIN user u ON u.recordName = p.user
        """

    /// Read through SQLite's C API, each row in place (an acceptance reads its share's participants, a
    /// thousand acceptances an apply of the benchmark, each a request of its own over `http:`).
    private static func participants(_ select: DirectStatement) throws -> [String: [Participant]] {
        var result: [String: [Participant]] = [:]
        try select.forEachRow { row in
            let shareName = row.string(0)
            let user = row.string(1)
            let (roleText, permissionText, acceptanceText) = (row.string(2), row.string(3), row.string(4))
            // A word the enums do not know is a damaged store: say so, never guess a default.
            guard let role = ParticipantRole(rawValue: roleText), let permission = Permission(rawValue: permissionText),
                let acceptance = AcceptanceStatus(rawValue: acceptanceText)
            else {
                throw ShareError(
                    .internalError,
                    "the store holds a participant of share \(shareName) with an unknown role, permission or status "
                        + "(\(roleText), \(permissionText), \(acceptanceText))",
                    subject: user)
            }
            let participant = Participant(
                participantID: user, userRecordName: user, email: row.optionalString(5), name: row.optionalString(6),
                role: role, permission: permission, acceptance: acceptance)
            result[shareName, default: []].append(participant)
            return true
        }
        return result
    }
}

/// Turns share rows into `Share` values.
enum ShareMapping {
    /// A public user's permission is the share row's (`Share.permission(of:)`); their participant row's
    /// `permission` column, which the table requires, is never read.
    static func share(_ row: ShareRow, participants: [Participant], owner: String, zoneID: ZoneID) -> Share {
        var share = Share(
            recordName: row.name, zoneID: zoneID, rootRecordName: row.root, title: row.title,
            publicPermission: row.publicPermission, ownerRecordName: owner,
            participants: participants, changeTag: ChangeSequence.tag(row.seq), shortGUID: row.shortGUID,
            url: ShareURL.url(shortGUID: row.shortGUID), created: row.created, modified: row.modified)
        for index in share.participants.indices where share.participants[index].role == .publicUser {
            share.participants[index].permission = share.permission(of: share.participants[index])
        }
        return share
    }
}
