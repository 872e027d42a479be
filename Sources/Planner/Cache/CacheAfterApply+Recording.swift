import Applier
import Foundation
import Logging
import PlanModel
import ShareKit

// MARK: - The plan's cache file after the apply

extension PlanCache {
    /// Leaves each cache file of `plan` as the store holds it after the plan's apply (`CacheAfterApply`), so
    /// that the next plan reads only what changed since: the zones the file remembers that nothing wrote
    /// since its token, and the zones the apply left exactly as declared (`report.writes`). Does nothing for a
    /// plan made without a cache, an apply that stopped early, or a store that cannot read a zone's change
    /// tags without its records (`readsZoneTags`); then the file stays as the plan left it, and the next plan
    /// reads what the apply wrote.
    /// - Parameter encoding: the recipes the files will remember, encoding since before the apply
    ///   (`startEncoding`).
    static func remember(
        _ plan: Plan, after report: ApplyReport, encoding: [String: Task<Data?, Never>] = [:], store: any Store,
        logger: Logger, parallelism: Int
    ) async {
        // Each owner's file from its own reads, as each owner's part was written: all at once.
        await withTaskGroup(of: Void.self) { group in
            for part in report.writes.parts {
                guard let keep = plan.afterApply[part.ownerHandle] as? CacheAfterApply else { continue }
                let recording = CacheAfterApply.Recording(
                    keep: keep, part: part, store: store, logger: logger, parallelism: max(1, parallelism))
                let encoded = encoding[part.ownerHandle]
                group.addTask { await recording.save(encoded: encoded) }
            }
        }
    }

    /// Starts encoding, while the apply writes, the recipe each cache file of `plan` will remember, where
    /// every user is known before the apply (a recipe of 100 shared zones is a few hundred kilobytes): the
    /// recipe does not change with the apply's sign-ins then. By owner handle, for `remember`.
    static func startEncoding(_ plan: Plan, store: any Store) -> [String: Task<Data?, Never>] {
        guard store.capabilities.readsZoneTags else { return [:] }
        var encoding: [String: Task<Data?, Never>] = [:]
        for (handle, keep) in plan.afterApply.byOwner {
            guard let keep = keep as? CacheAfterApply, !keep.pending.isEmpty,
                let (_, remembered) = keep.recipe(signedIn: [:], owner: nil), let remembered
            else { continue }
            encoding[handle] = Task.detached(priority: .utility) { try? JSONEncoder().encode(remembered) }
        }
        return encoding
    }
}

extension CacheAfterApply {
    /// The plan's context with the users as the store has them after the apply's sign-ins (`signedIn`), and
    /// the recipe the cache file remembers with those users and its zones' digests in that context; nil when
    /// a user has no record name, or the owner is not `owner` (the file is then left as the plan wrote it).
    func recipe(signedIn: [String: UserRecordName], owner: UserRecordName?) -> (PlanMemo.Context, RememberedRecipe?)? {
        var context = self.context
        context.users = context.users.filling { signedIn[EmailAddress.normalized($0.email)] }
        guard context.users.entries.allSatisfy({ $0.recordName != nil }),
            owner == nil || context.users.owner.recordName == owner
        else { return nil }
        guard var remember else { return (context, nil) }
        let contextKey = context.key
        remember.users = context.users
        remember.digests = remember.contents.mapValues { PlanMemo.digest(context: contextKey, content: $0) }
        return (context, remember)
    }

    /// One owner's cache file, recorded from what that owner's part of the apply wrote.
    struct Recording: Sendable {
        let keep: CacheAfterApply
        let part: PartWrites
        let store: any Store
        let logger: Logger
        let parallelism: Int

        /// How many zones' tags one store call reads.
        static let zonesPerTagRead = 10

        /// Saves the file: the zones it remembers that nothing wrote since its token, and the zones the part
        /// left exactly as declared; left as the plan wrote it when the store cannot be read back whole.
        /// - Parameter encoded: the recipe the file remembers, encoded while the apply wrote; nil encodes it
        ///   with the file.
        func save(encoded: Task<Data?, Never>?) async {
            let owner = part.owner
            guard let (context, remembered) = keep.recipe(signedIn: part.signedIn, owner: owner) else { return }
            var memo = keep.memo ?? PlanMemo(storeName: store.displayName, owner: owner)
            guard memo.owner == owner, memo.storeName == store.displayName else { return }
            // Every zone written since the file's token: by the apply, or behind its back. The token is taken
            // before the zones are read below, so that what changes after is named by the next plan's feed.
            let reader = LiveStateReader(store: store, owner: owner, logger: logger)
            guard let (feed, _) = try? await reader.databaseChanges(since: keep.memo?.databaseToken) else {
                return
            }
            let touched = Set((feed.changedZones + feed.deletedZones).map(\.zoneName))
            // A remembered zone's digest names the users as they were: with new users, those zones are read
            // again.
            memo.zones =
                context.users == keep.context.users ? memo.zones.filter { !touched.contains($0.key) } : [:]
            memo.databaseToken = feed.token
            let contextKey = context.key
            // A zone whose tags the apply cannot know is left to the next plan, unread.
            let names = part.zones.sorted().filter { !part.unfinished.contains($0) && part.tags.knows($0) }
            let basis = Dictionary(part.basis.map { ($0.zoneName, $0) }, uniquingKeysWith: { a, _ in a })
            // A few zones a call: a call a zone cost more than the reading, and every zone at once would hold
            // every record's tag at the same time (about 10 MB at 100,000 records, at the apply's peak). The
            // embedded store reads one call after another; over Web Services the calls go together, so that
            // their zones' feeds travel in one round, 20 zones a request (a round is 80 ms and more away from
            // Apple).
            let batches = stride(from: 0, to: names.count, by: Self.zonesPerTagRead).map {
                Array(names[$0..<min($0 + Self.zonesPerTagRead, names.count)])
            }
            let (store, keep) = (self.store, self.keep)
            var complete = true
            await BoundedTasks.run(
                batches, limit: store.capabilities.batchesInOneTransaction ? 1 : parallelism,
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
                        placeless: pending.placelessContent.map {
                            PlanMemo.digest(context: contextKey, content: $0)
                        },
                        exists: true, tags: tags, shares: now.shares, notes: pending.notes, waiting: [],
                        token: now.token, undeclared: pending.undeclared)
                }
            }
            guard complete else { return }
            var recipeJSON: Data?
            if let remembered {
                DeclaredRecordFile.removeAll(
                    in: PlanMemo.recordsDirectory(of: keep.file), except: Set(remembered.contents.values))
                recipeJSON = await encoded?.value
                if recipeJSON == nil { memo.recipe = remembered }
            }
            memo.save(to: keep.file, recipeJSON: recipeJSON)
        }

        /// The zone's tags, packed, when it holds exactly the records and shares the plan read (`basis`), less
        /// those the apply deleted, with the tags it wrote: nothing else wrote to it since the plan read it.
        private func writtenExactly(_ now: ZoneTags, in zone: String, basis: [String: String]) -> ChangeTags? {
            guard let expected = part.tags.tags(in: zone, from: basis, now: now) else { return nil }
            var tags = now.records
            for share in now.shares { tags[share.recordName] = share.changeTag ?? "" }
            guard tags == expected else {
                logger.debug("zone \(zone) changed during the apply: the next plan reads it")
                return nil
            }
            return ChangeTags(tags).packedWherePossible
        }
    }
}
