import ShareKit

// MARK: - Zone tags without the records' fields

extension WebServicesStore {
    /// Each zone's change tags, shares and token, read from the start of its feed with no record field but
    /// a share's title (`desiredKeys`), every zone at once: the reads travel together, up to 20 zones a
    /// `changes/zone` request (`ZoneFeedBatches`). An apply of 20 zones then leaves the plan's cache file as
    /// the store holds it in one round, and the plan after it is as quick as any other (Docs/Plans.md, "After
    /// an apply"); the answer carries a name and a tag a record, not its fields.
    public func zoneTags(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [ZoneTags?]
    {
        try await zoneTags(zoneIDs, since: zoneIDs.map { _ in nil }, in: database, as: user)
    }

    /// Each zone from what an earlier reading found and its feed since that reading's token (the feed from the
    /// start where nothing is known, or the token is refused), every zone at once.
    public func zoneTags(
        _ zoneIDs: [ZoneID], since known: [ZoneTags?], in database: DatabaseScope, as user: UserRecordName
    ) async throws -> [ZoneTags?] {
        try await withThrowingTaskGroup(of: (Int, ZoneTags?).self) { group in
            for (index, zoneID) in zoneIDs.enumerated() {
                let known = index < known.count ? known[index] : nil
                group.addTask {
                    guard let known else {
                        return (index, try await self.tagsOnly(zoneID, from: nil, in: database, as: user))
                    }
                    do {
                        return (index, try await self.tagsOnly(zoneID, from: known, in: database, as: user))
                    } catch let error as ShareError where error.code == .badRequest {
                        // A token the store no longer takes (it was reset since): the zone read whole.
                        return (index, try await self.tagsOnly(zoneID, from: nil, in: database, as: user))
                    }
                }
            }
            var answers = [ZoneTags?](repeating: nil, count: zoneIDs.count)
            for try await (index, tags) in group { answers[index] = tags }
            return answers
        }
    }

    /// The zone's tags from `known` and its feed since `known`'s token, or from the start of its feed.
    private func tagsOnly(_ zoneID: ZoneID, from known: ZoneTags?, in database: DatabaseScope, as user: UserRecordName)
        async throws -> ZoneTags?
    {
        var tags = known ?? ZoneTags(records: [:], shares: [], token: ChangeToken(rawValue: ""))
        var shares = Dictionary(tags.shares.map { ($0.recordName, $0) }, uniquingKeysWith: { _, last in last })
        let key = ZoneFeedBatches.Key(user: user, database: database)
        do {
            let ending = try await ChangeFeedPaging.follow(
                from: known?.token,
                read: { token in
                    var request = ZoneChangesRequest.ZoneRequest(
                        zoneID: WireZoneID(zoneID), syncToken: token?.rawValue, resultsLimit: nil)
                    // A share's title is a field, and the plan's cache keeps whole shares.
                    request.desiredKeys = [shareTitleField]
                    return try await feeds.read(request, as: key).changes(in: zoneID)
                },
                receive: { page in
                    for record in page.changedRecords { tags.records[record.recordName] = record.changeTag ?? "" }
                    for share in page.changedShares { shares[share.recordName] = share }
                    for name in page.deletedRecordNames {
                        tags.records[name] = nil
                        shares[name] = nil
                    }
                    return true
                })
            tags.token = ending.token
        } catch let error as ShareError where error.code == .zoneNotFound {
            return nil
        }
        tags.shares = shares.values.sorted { $0.recordName < $1.recordName }
        return tags
    }
}
