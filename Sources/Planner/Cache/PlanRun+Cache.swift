import Applier
import Foundation
import PlanModel
import Recipe
import ShareKit

// What a plan run keeps for the next plan (Docs/Plans.md, "Incremental plans"): the zones that planned to no
// changes, with what their plan took from the store; the zones an apply may leave as declared; the declared
// records beside the cache file; and the cache file itself, written once the plan is made.
extension PlanRun {
    /// Keeps a zone that planned to changes for the apply, whose plan after a successful apply is known: no
    /// change, no waiting line (the store acts as every participant), only the note of the undeclared
    /// records it keeps.
    mutating func keepForApply(
        _ index: Int, undeclared: Int, notes: [String], waiting: [String], read: CacheAfterApply.Read?
    ) {
        let zone = zones[index]
        guard let content = incremental.contents[index], options.targets.isEmpty, !options.destroy,
            store.capabilities.actsAsAnyUser, !zone.absent, zone.name != defaultZoneName, waiting.isEmpty
        else { return }
        pending[zone.name] = CacheAfterApply.Pending(
            content: content, placelessContent: incremental.placelessContents[index], undeclared: undeclared,
            notes: notes, read: read)
    }

    /// Remembers a zone read in part that planned to no changes: what the cache file knew, with the tags and
    /// token the partial read found.
    mutating func rememberUnchanged(partial changed: PartialZone, tags: ChangeTags) {
        var kept = changed.known
        kept.tags = tags
        kept.token = changed.token
        incremental.memo?.zones[changed.zoneName] = kept
    }

    /// Remembers a zone read from the store that planned to no changes: its digest, what the plan took from the
    /// store, and the notes and waiting lines the plan of it gave (from `notesFrom` and `waitingFrom` on).
    mutating func rememberUnchanged(
        _ index: Int, _ liveZone: LiveZone?, token: ChangeToken?, undeclared: Int, notesFrom: Int, waitingFrom: Int
    ) {
        guard let digest = incremental.digests[index] else { return }
        var zone = PlanMemo.Zone(
            digest: digest, exists: liveZone != nil, tags: ChangeTags(liveZone?.tags ?? [:]),
            shares: Array(liveZone?.shares.values ?? [:].values),
            notes: Array(builder.notes[notesFrom...]), waiting: Array(builder.waiting[waitingFrom...]),
            token: token, undeclared: undeclared)
        zone.placeless = incremental.placeless[index]
        let name = zones[index].name
        incremental.memo?.zones[name] = zone
    }

    /// Writes a zone's declared records beside the cache file, under the digest of its declaration, while the
    /// next zones are read and planned; a plan of the same files takes them from there (a recipe read from
    /// those files leaves them as they are).
    mutating func keepDeclaredRecords(_ index: Int) {
        guard writesRecords, !recipeKept, remember != nil, let cache = options.cache,
            let content = incremental.contents[index]
        else { return }
        let records = zones[index].records
        let directory = PlanMemo.recordsDirectory(of: cache.file)
        recordWrites.append(DeclaredRecordFile.startWriting(records, directory: directory, digest: content))
    }

    /// Writes the cache file for the next plan, and tells the plan what its apply may leave in it
    /// (`Plan.afterApply`).
    /// - Parameter readAnyZone: whether the run read a zone whole from the store.
    mutating func writeCache(for plan: inout Plan, readAnyZone: Bool) async {
        // A plan that took every zone from the file, the store's token unchanged, would write the same file.
        let unchanged =
            !writesRecords && !readAnyZone && partial.isEmpty && incremental.previous?.recipe != nil
            && incremental.previous?.databaseToken == incremental.memo?.databaseToken
            && incremental.previous?.zones.count == incremental.memo?.zones.count
        guard let cache = options.cache, !unchanged else { return }
        var remember = remember
        if remember != nil {
            for task in recordWrites { await task.value }
            for (index, digest) in incremental.digests { remember?.digests[zones[index].name] = digest }
            for (index, content) in incremental.contents { remember?.contents[zones[index].name] = content }
        }
        if var memo = incremental.memo {
            if let remember {
                DeclaredRecordFile.removeAll(
                    in: PlanMemo.recordsDirectory(of: cache.file), except: Set(remember.contents.values))
                memo.recipe = remember
            }
            memo.save(to: cache.file)
        } else if ownerRecordName == nil, !recipeKept, let remember {
            // The owner is not in the store yet, so nothing live is known: the file keeps only the recipe (no
            // owner, no token, no zone), for the apply that follows to plan it from the records kept beside it
            // without loading it (`Planner.recipeFromCache`).
            DeclaredRecordFile.removeAll(
                in: PlanMemo.recordsDirectory(of: cache.file), except: Set(remember.contents.values))
            PlanMemo(storeName: store.displayName, owner: "", recipe: remember).save(to: cache.file)
        }
        if !pending.isEmpty {
            // The apply writes the file again, the recipe with its users as they are then.
            plan.afterApply[plan.owner.handle] = CacheAfterApply(
                file: cache.file, memo: incremental.memo, remember: remember, context: context, pending: pending)
        }
    }
}
