import Foundation
import ShareKit

// MARK: - The plan's cache file after the apply

extension ApplyRun {
    /// Leaves the plan's cache file as the store holds it after this run (`CacheAfterApply`), so that the
    /// next plan reads only what changed since: the zones the file remembers that nothing wrote since its
    /// token, and the zones this run left exactly as declared. Does nothing for a plan without a cache, a run
    /// that stopped early, or a store that cannot read a zone's change tags without its records
    /// (`readsZoneTags`); then the file stays as the plan left it, and the next plan reads what the apply
    /// wrote.
    mutating func keepPlanCache() async {
        guard let keep = plan.cacheAfterApply, !cachedZones.isEmpty, stopped == nil,
            let (context, remembered) = cacheRecipe()
        else { return }
        var memo =
            keep.memo
            ?? PlanMemo(storeName: store.displayName, owner: owner)
        guard memo.owner == owner, memo.storeName == store.displayName else { return }
        // Every zone written since the file's token: by this run, or behind its back. The token is taken
        // before the zones are read below, so that what changes after is named by the next plan's feed.
        let reader = LiveStateReader(store: store, owner: owner, logger: logger)
        guard let (feed, _) = try? await reader.databaseChanges(since: keep.memo?.databaseToken) else { return }
        let touched = Set((feed.changedZones + feed.deletedZones).map(\.zoneName))
        // A remembered zone's digest names the users as they were: with new users, those zones are read again.
        memo.zones =
            context.users == keep.context.users ? memo.zones.filter { !touched.contains($0.key) } : [:]
        memo.databaseToken = feed.token
        let contextKey = context.key
        let unfinished = unfinishedZones()
        // A zone whose tags this run cannot know is left to the next plan, unread.
        let names = cachedZones.sorted().filter { !unfinished.contains($0) && written.knows($0) }
        let basis = Dictionary(plan.basis.zones.map { ($0.zoneName, $0) }, uniquingKeysWith: { a, _ in a })
        // A few zones a call: a call a zone cost more than the reading, and every zone at once would hold every
        // record's tag at the same time (about 10 MB at 100,000 records, at the apply's peak). The embedded
        // store reads one call after another; over Web Services the calls go together, so that their zones'
        // feeds travel in one round, 20 zones a request (a round is 80 ms and more away from Apple).
        let batches = stride(from: 0, to: names.count, by: Self.zonesPerTagRead).map {
            Array(names[$0..<min($0 + Self.zonesPerTagRead, names.count)])
        }
        let store = self.store
        let owner = self.owner
        var complete = true
        await BoundedTasks.run(
            batches, limit: store.capabilities.batchesInOneTransaction ? 1 : max(1, parallelism),
            while: { complete }
        ) { batch in
            // Each zone read back from what the plan read of it: over `http:` only its changes since.
            let known = batch.map { name -> ZoneTags? in
                guard let read = keep.pending[name]?.read, let tags = basis[name]?.tags else { return nil }
                let shareNames = Set(read.shares.map(\.recordName))
                return ZoneTags(
                    records: tags.filter { !shareNames.contains($0.key) }, shares: read.shares, token: read.token)
            }
            return try? await store.zoneTags(
                batch.map { ZoneID(zoneName: $0) }, since: known, in: .private, as: owner)
        } receive: { batch, read in
            guard let read, read.count == batch.count else {
                complete = false
                return
            }
            for (name, now) in zip(batch, read) {
                guard let pending = keep.pending[name], let now,
                    let tags = writtenExactly(now, in: name, basis: basis[name]?.tags ?? [:])
                else { continue }
                memo.zones[name] = PlanMemo.Zone(
                    digest: PlanMemo.digest(context: contextKey, content: pending.content),
                    placeless: pending.placelessContent.map { PlanMemo.digest(context: contextKey, content: $0) },
                    exists: true, tags: tags, shares: now.shares, notes: pending.notes, waiting: [], token: now.token,
                    undeclared: pending.undeclared)
            }
        }
        guard complete else { return }
        var recipeJSON: Data?
        if let remembered {
            DeclaredRecordFile.removeAll(
                in: PlanMemo.recordsDirectory(of: keep.file), except: Set(remembered.contents.values))
            recipeJSON = await encodedRecipe?.value
            if recipeJSON == nil { memo.recipe = remembered }
        }
        memo.save(to: keep.file, recipeJSON: recipeJSON)
    }

    /// The plan's context with the users as the store has them after this run's sign-ins, and the recipe the
    /// cache file remembers with those users and its zones' digests in that context; nil when a user has no
    /// record name (the file is then left as the plan wrote it).
    func cacheRecipe() -> (PlanMemo.Context, RememberedRecipe?)? {
        guard let keep = plan.cacheAfterApply else { return nil }
        var context = keep.context
        context.users = context.users.filling { newUserRecordNames[EmailAddress.normalized($0.email)] }
        guard context.users.entries.allSatisfy({ $0.recordName != nil }), context.users.owner.recordName == owner
        else { return nil }
        guard var remember = keep.remember else { return (context, nil) }
        let contextKey = context.key
        remember.users = context.users
        remember.digests = remember.contents.mapValues { PlanMemo.digest(context: contextKey, content: $0) }
        return (context, remember)
    }

    /// Starts encoding the recipe the cache file will remember (`cacheRecipe`), once the users are signed in:
    /// it is known before the first write, and encoding it (a few hundred kilobytes for a recipe of 100 shared
    /// zones) runs while the store writes instead of after. `keepPlanCache` takes it.
    mutating func startEncodingCacheRecipe() {
        guard plan.cacheAfterApply != nil, !cachedZones.isEmpty, let remembered = cacheRecipe()?.1 else { return }
        encodedRecipe = Task.detached(priority: .utility) { try? JSONEncoder().encode(remembered) }
    }

    /// How many zones' tags one store call reads.
    static let zonesPerTagRead = 10

    /// The zone's tags, packed, when it holds exactly the records and shares the plan read (`basis`), less
    /// those this run deleted, with the tags this run wrote: nothing else wrote to it since the plan read it.
    private func writtenExactly(_ now: ZoneTags, in zone: String, basis: [String: String]) -> ChangeTags? {
        guard let expected = written.tags(in: zone, from: basis, now: now) else { return nil }
        var tags = now.records
        for share in now.shares { tags[share.recordName] = share.changeTag ?? "" }
        guard tags == expected else {
            logger.debug("zone \(zone) changed during the apply: the next plan reads it")
            return nil
        }
        return ChangeTags(tags).packedWherePossible
    }

    /// The private zones with a change this run did not make.
    private func unfinishedZones() -> Set<String> {
        var zones: Set<String> = []
        // By index: the changes are read in place, not copied one by one.
        for index in plan.changes.indices
        where plan.changes[index].database == .private && plan.changes[index].kind != .subscription
            && outcomes[index] != .applied
        {
            zones.insert(plan.changes[index].zoneName)
        }
        return zones
    }
}

/// What an apply wrote in the zones it may leave in the plan's cache file: the change tags of the records
/// and shares it saved, packed as `ChangeTags` lines (100,000 records cost about 2 MB, not the 10 of a
/// dictionary), and the names it deleted.
struct WrittenTags {
    private var saved: [String: String] = [:]
    private var deleted: [String: Set<String>] = [:]
    /// Zones where a name could not be packed (a tab or newline in it): their tags are not known.
    private var unknown: Set<String> = []
    /// Each accepted share, by zone and record name.
    private var acceptances: [String: [String: Acceptance]] = [:]

    /// A share's acceptances in this run: the store calls that made them, the tags their answers gave, and
    /// the participants who accepted.
    private struct Acceptance {
        var calls: Set<Int> = []
        var tags: Set<String> = []
        var users: Set<UserRecordName> = []
    }

    mutating func saved(_ name: String, tag: String?, zone: String) {
        let tag = tag ?? ""
        guard !name.breaksTabbedLines, !tag.breaksTabbedLines else {
            unknown.insert(zone)
            return
        }
        saved[zone, default: ""] += "\(name)\t\(tag)\n"
    }

    /// A share's tag after `user` accepted it in the store call numbered `call`.
    mutating func accepted(_ name: String, tag: String?, zone: String, by user: UserRecordName, call: Int) {
        var acceptance = acceptances[zone, default: [:]][name, default: Acceptance()]
        acceptance.calls.insert(call)
        acceptance.tags.insert(tag ?? "")
        acceptance.users.insert(user)
        acceptances[zone, default: [:]][name] = acceptance
        if acceptance.calls.count == 1 { saved(name, tag: tag, zone: zone) }
    }

    /// Whether this run's writes in `zone` left tags it knows.
    func knows(_ zone: String) -> Bool { !unknown.contains(zone) }

    mutating func deleted(_ name: String, zone: String) {
        deleted[zone, default: []].insert(name)
    }

    /// The tags of `zone` after this run's writes, starting from `tags`, as the store holds it `now`; nil
    /// when they are not known. A zone's deletions come before its saves in an apply, and a later save of a
    /// name wins over an earlier one.
    ///
    /// A share accepted in several calls at once (several participants' requests over `http:`) was written
    /// last by whichever the store ran last, which the order of the answers does not tell: its tag is the
    /// one the store holds `now` when that is one of this run's acceptances' tags and every participant this
    /// run accepted shows accepted there. Nothing else then wrote the share after this run's last acceptance,
    /// as a record's tag tells of a record.
    func tags(in zone: String, from tags: [String: String], now: ZoneTags) -> [String: String]? {
        guard !unknown.contains(zone), let written = ChangeTags(packed: saved[zone] ?? "") else { return nil }
        var tags = tags
        for name in deleted[zone] ?? [] { tags[name] = nil }
        written.merge(into: &tags)
        for (name, acceptance) in acceptances[zone] ?? [:] where acceptance.calls.count > 1 {
            guard let share = now.shares.first(where: { $0.recordName == name }),
                acceptance.tags.contains(share.changeTag ?? ""),
                acceptance.users.isSubset(
                    of: share.participants.lazy.filter { $0.acceptance == .accepted }.map(\.userRecordName))
            else { return nil }
            tags[name] = share.changeTag ?? ""
        }
        return tags
    }
}
