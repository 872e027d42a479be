import Foundation
import GRDB
import ShareKit

// Sharing: resolving, accepting (an apply's thousand acceptances in one transaction) and leaving shares.
extension SQLiteStore {
    public func resolveShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try Self.admit(user, .aboutTheUser, .public)
        let guid = ShareURL.shortGUID(from: url)
        return try await read("resolving a share") { db in
            let (share, _) = try SharedZones.share(shortGUID: guid, url: url, db: db)
            // Who may see a share's metadata is who may accept it.
            if let refusal = AccessRules.accept(
                caller: user, zoneOwner: share.ownerRecordName, share: share, subject: url)
            {
                throw refusal
            }
            return try Self.metadata(share, as: user, db: db)
        }
    }

    public func acceptShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try Self.admit(user, .aboutTheUser, .public)
        return try await write("accepting a share") { db in
            var shares = AcceptedShares()
            let metadata = try Self.acceptOne(url: url, as: user, shares: &shares, db: db)
            try shares.finish(db)
            return metadata
        }
    }

    /// Accepts every share in one transaction; a share that cannot be accepted gets its error and changes
    /// nothing, and the others are accepted.
    public func acceptShares(urls: [String], as user: UserRecordName) async throws
        -> [Result<ShareMetadata, ShareError>]
    {
        try Self.admit(user, .aboutTheUser, .public)
        return try await write("accepting shares") { db in
            var shares = AcceptedShares()
            let results = try urls.map { url in try Self.accept(url: url, as: user, shares: &shares, db: db) }
            try shares.finish(db)
            return results
        }
    }

    /// Every user's acceptances in one transaction: an apply accepts a thousand shares as a hundred users.
    public func acceptShares(_ requests: [ShareAcceptances]) async throws -> [[Result<ShareMetadata, ShareError>]] {
        try await write("accepting shares") { db in
            var shares = AcceptedShares()
            let results = try requests.map { request -> [Result<ShareMetadata, ShareError>] in
                do {
                    try Self.admit(request.user, .aboutTheUser, .public)
                } catch let error as ShareError {
                    return request.urls.map { _ in .failure(error) }
                }
                return try request.urls.map { url in
                    try Self.accept(url: url, as: request.user, shares: &shares, db: db)
                }
            }
            try shares.finish(db)
            return results
        }
    }

    /// What one transaction's acceptances share: the shares read or accepted, by short GUID (a share that ten
    /// participants accept is read once, and each acceptance updates it here as it updates the store), the
    /// change sequence (read once, stored by `finish`), the sequence numbers of the shares and zones the
    /// acceptances wrote (the last of each, stored by `finish`), and whether any user holds a subscription (no
    /// acceptance adds one). A thousand acceptances an apply of the benchmark each read and wrote the counter,
    /// wrote their share's and zone's number, and asked for subscriptions.
    struct AcceptedShares {
        var byGUID: [String: (share: Share, zoneId: Int64)] = [:]
        private var sequence: ChangeSequence?
        private var subscriptions: Bool?
        /// The last sequence number each share was written at, and its stamp, by zone row id and share name.
        private var shareSeqs: [ShareKey: (seq: Int64, modified: Stamp)] = [:]
        /// The last sequence number each zone was written at, by row id.
        private var zoneSeqs: [Int64: Int64] = [:]

        private struct ShareKey: Hashable {
            var zoneId: Int64
            var name: String
        }

        /// Notes that the share `name` of the zone `zoneId` was written at `seq`, as `modified` says.
        mutating func wrote(share name: String, zoneId: Int64, at seq: Int64, modified: Stamp) {
            shareSeqs[ShareKey(zoneId: zoneId, name: name)] = (seq, modified)
            zoneSeqs[zoneId] = seq
        }

        /// The sequence number of the next write.
        mutating func nextSeq(_ db: Database) throws -> Int64 {
            var current = try sequence ?? ChangeSequence.read(db)
            defer { sequence = current }
            return current.next()
        }

        /// Whether any user holds a subscription, asked once.
        mutating func anySubscription(_ db: Database) throws -> Bool {
            if let subscriptions { return subscriptions }
            let any = try SubscriptionFiring.anySubscription(db)
            subscriptions = any
            return any
        }

        /// Stores the sequence numbers the shares and zones were last written at; call before reading a share
        /// of the store again within the transaction.
        mutating func storeSeqs(_ db: Database) throws {
            for (key, written) in shareSeqs {
                try DirectStatement.run(
                    "UPDATE share SET seq = ?, modifiedAt = ?, modifiedBy = ? WHERE zoneId = ? AND name = ?", in: db
                ) {
                    $0.bind(written.seq)
                    $0.bind(written.modified.timestamp)
                    $0.bind(written.modified.userRecordName)
                    $0.bind(key.zoneId)
                    $0.bind(key.name)
                }
            }
            for (zoneId, seq) in zoneSeqs {
                try DirectStatement.run("UPDATE zone SET seq = ? WHERE id = ?", in: db) {
                    $0.bind(seq)
                    $0.bind(zoneId)
                }
            }
            shareSeqs = [:]
            zoneSeqs = [:]
        }

        /// Stores the sequence numbers: the counter's last, and each share's and zone's; call once, at the end
        /// of the transaction.
        mutating func finish(_ db: Database) throws {
            try storeSeqs(db)
            try sequence?.store(db)
        }
    }

    /// Accepts one share inside the caller's write transaction; its `ShareError` when it cannot, thrown
    /// before anything of it was written. Any other error (the database's) ends the transaction: it is
    /// rolled back, and the call throws.
    private static func accept(url: String, as user: UserRecordName, shares: inout AcceptedShares, db: Database)
        throws -> Result<ShareMetadata, ShareError>
    {
        do {
            return .success(try acceptOne(url: url, as: user, shares: &shares, db: db))
        } catch let error as ShareError {
            return .failure(error)
        }
    }

    private static func acceptOne(url: String, as user: UserRecordName, shares: inout AcceptedShares, db: Database)
        throws -> ShareMetadata
    {
        let guid = ShareURL.shortGUID(from: url)
        let (share, zoneId): (Share, Int64)
        if let known = shares.byGUID[guid] {
            (share, zoneId) = known
        } else {
            (share, zoneId) = try SharedZones.share(shortGUID: guid, url: url, db: db)
            shares.byGUID[guid] = (share, zoneId)
        }
        let subject = "\(share.zoneID.zoneName)/\(share.recordName)"
        if let error = AccessRules.accept(
            caller: user, zoneOwner: share.ownerRecordName, share: share, subject: subject)
        {
            throw error
        }
        guard user != share.ownerRecordName else {
            return ShareMetadata(
                share: share, zoneID: share.zoneID, rootRecordName: share.rootRecordName,
                participant: share.participant(user))
        }
        let entry = share.participant(user)
        if entry?.acceptance == .accepted {
            return ShareMetadata(
                share: share, zoneID: share.zoneID, rootRecordName: share.rootRecordName, participant: entry)
        }
        // A public user joining is one more participant: the limit is the one every share keeps.
        if entry == nil, let problem = AccessRules.participantCountProblem(share.participants.count + 1) {
            throw ShareError(.badRequest, problem, subject: subject)
        }
        let seq = try shares.nextSeq(db)
        if entry == nil {
            let position =
                (try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT MAX(position) FROM participant WHERE zoneId = ? AND shareName = ?"),
                    arguments: [zoneId, share.recordName]) ?? -1) + 1
            try ParticipantRow(
                zoneId: zoneId, shareName: share.recordName, user: user,
                role: .publicUser, permission: share.publicPermission, acceptance: .accepted, position: position
            ).insert(db)
        } else {
            try DirectStatement.run(
                "UPDATE participant SET acceptance = ? WHERE zoneId = ? AND shareName = ? AND user = ?", in: db
            ) {
                $0.bind(AcceptanceStatus.accepted)
                $0.bind(zoneId)
                $0.bind(share.recordName)
                $0.bind(user)
            }
        }
        // The share's and zone's numbers are stored once each, by `finish`: ten participants accept a share.
        let modified = Stamp(timestamp: Self.now, userRecordName: user)
        shares.wrote(share: share.recordName, zoneId: zoneId, at: seq, modified: modified)
        if try shares.anySubscription(db) {
            try SubscriptionFiring.fireZoneChange(
                zone: share.zoneID.zoneName, owner: share.ownerRecordName, participants: [user], by: user, db: db)
        }
        let accepted: Share
        if let position = share.participants.firstIndex(where: { $0.userRecordName == user }) {
            // The share as a read would give it now: this entry accepted, the share's new change tag. Reading it
            // again cost as much as the rest of the acceptance (1,000 acceptances an apply of the benchmark).
            var updated = share
            updated.participants[position].acceptance = .accepted
            updated.changeTag = ChangeSequence.tag(seq)
            updated.modified = modified
            accepted = updated
        } else {
            try shares.storeSeqs(db)
            (accepted, _) = try SharedZones.share(shortGUID: guid, url: url, db: db)
        }
        shares.byGUID[guid] = (accepted, zoneId)
        return try metadata(accepted, as: user, db: db)
    }

    /// The metadata of `share` as `user` is answered it, with the owner's address and name.
    private static func metadata(_ share: Share, as user: UserRecordName, db: Database) throws -> ShareMetadata {
        let owner = try UserRow.fetchOne(db, recordName: share.ownerRecordName)
        return ShareMetadata(share: share, as: user, ownerEmail: owner?.email, ownerName: owner?.name)
    }

    public func leaveShare(recordName: String, in zoneID: ZoneID, as user: UserRecordName) async throws {
        try Self.admit(user, .write, .shared)
        return try await write("leaving a share") { db in
            let owner = zoneID.ownerRecordName == defaultOwnerName ? user : zoneID.ownerRecordName
            let subject = "\(zoneID.zoneName)/\(recordName)"
            guard
                let zone = try ZoneRow.all().privateZone(owner: owner, name: zoneID.zoneName).fetchOne(db),
                let zoneId = zone.id
            else {
                // Someone else's missing zone answers as one the caller may not see (`ZoneContext.resolve`).
                guard owner == user else {
                    throw ZoneContext.notShared(zoneID, owner: owner, caller: user, shares: nil)
                }
                throw ShareError(.zoneNotFound, "no zone \(zoneID.zoneName) of \(owner)", subject: zoneID.zoneName)
            }
            let context = try ZoneContext.resolve(
                ZoneID(zoneName: zone.name, ownerRecordName: owner), scope: owner == user ? .private : .shared,
                caller: user, db: db, createDefault: false, leaving: true)
            // A share the caller is not listed on answers as a missing one: it may not see it.
            guard let share = context.sharesByName[recordName], owner == user || share.participant(user) != nil else {
                throw ShareError(.notFound, "no share named \(recordName) in the zone \(zone.name)", subject: subject)
            }
            if let error = AccessRules.leave(caller: user, zoneOwner: owner, share: share, subject: subject) {
                throw error
            }
            var sequence = try ChangeSequence.read(db)
            let shareSeq = sequence.next()
            try db.execute(
                sql: "UPDATE participant SET acceptance = ? WHERE zoneId = ? AND shareName = ? AND user = ?",
                arguments: [AcceptanceStatus.removed, zoneId, recordName, user])
            try db.execute(
                sql: "UPDATE share SET seq = ?, modifiedAt = ?, modifiedBy = ? WHERE zoneId = ? AND name = ?",
                arguments: [shareSeq, Self.now, user, zoneId, recordName])
            try db.cachedStatement(sql: "UPDATE zone SET seq = ? WHERE id = ?").execute(arguments: [shareSeq, zoneId])
            try ZoneRemovalRow(scope: .shared, user: user, owner: owner, zoneName: zone.name, seq: sequence.next())
                .insert(db, onConflict: .replace)
            try sequence.store(db)
            try SubscriptionFiring.fireZoneChange(
                zone: zone.name, owner: owner, participants: [user], by: user, db: db)
        }
    }
}
