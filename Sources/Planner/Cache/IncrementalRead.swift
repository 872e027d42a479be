import Applier
import PlanModel
import Recipe
import ShareKit

/// What an incremental plan takes from its cache file before it reads the store: which zones it can plan
/// without reading them, and the memo it writes for the next plan.
///
/// It asks the store's change feed what changed since the token the file holds (one call, or a few pages),
/// and lists the owner's zones once (the read of the other zones uses that list). A zone is remembered when
/// the file has it, its digest (declaration, users, options) is the same, the feed does not name it (changed
/// or deleted), and it exists now exactly when it existed then. A token the store refuses (it was reset, or
/// it is another store) means nothing is remembered.
struct IncrementalRead {
    /// The remembered zones, by index in the zones planned.
    var remembered: [Int: PlanMemo.Zone] = [:]
    /// Each zone's digest, by index (only when a cache is in use), also when the owner is not in the store yet.
    var digests: [Int: String] = [:]
    /// Each zone's declaration's digest (`PlanMemo.contents(of:)`), by index, beside `digests`.
    var contents: [Int: String] = [:]
    /// Each zone's digest and declaration's digest without the places its shares are written at, by index,
    /// where known.
    var placeless: [Int: String] = [:]
    var placelessContents: [Int: String] = [:]
    /// The owner's zones, listed once for the whole plan; nil without a cache.
    var listed: [Zone]?
    /// The memo to write after the plan, its token taken before any zone was read; nil without a cache.
    var memo: PlanMemo?
    /// The store calls made.
    var calls = 0
    /// The memo the last plan left, when the store took its token.
    var previous: PlanMemo?
    /// The zones the store's change feed names (changed or deleted since the memo's token).
    var touched: Set<String> = []
    /// The owner's zones that exist.
    var existing: Set<String> = []

    /// - Parameter known: the memo already read from the cache file, if the caller read it.
    init(
        cache: PlanCache?, known: PlanMemo? = nil, reader: LiveStateReader, owner: UserRecordName?,
        zones: [DeclaredZone], alwaysRead: Set<String>, digest: (DeclaredZone) -> PlanMemo.Digests
    ) async throws {
        guard let cache, !zones.isEmpty else { return }
        // Digested on every core: a zone's digest reads all of its records.
        let parts = OnEveryCore.parts(of: zones.count, atLeast: OnEveryCore.zonesPerPart)
        let digested = OnEveryCore.map(parts.count) { part in
            parts[part].compactMap { index in
                alwaysRead.contains(zones[index].name) ? nil : (index, digest(zones[index]))
            }
        }
        for (index, zoneDigests) in digested.joined() {
            digests[index] = zoneDigests.full
            contents[index] = zoneDigests.content
            placeless[index] = zoneDigests.placeless
            placelessContents[index] = zoneDigests.placelessContent
        }
        guard let owner else { return }
        var previous =
            cache.refresh == .incremental
            ? (known ?? PlanMemo.load(cache.file, storeName: reader.store.displayName, owner: owner)) : nil
        if let memo = previous, memo.storeName != reader.store.displayName || memo.owner != owner { previous = nil }
        var feed: DatabaseChanges?
        if let known = previous {
            do {
                let (changes, calls) = try await reader.databaseChanges(since: known.databaseToken)
                feed = changes
                self.calls += calls
            } catch {
                // An expired or unknown token: read everything, and start again from a new token.
                self.calls += 1
                previous = nil
            }
        }
        if feed == nil {
            let (changes, calls) = try await reader.databaseChanges(since: nil)
            feed = changes
            self.calls += calls
        }
        guard let feed else { return }
        let listed = try await reader.listZones()
        calls += 1
        self.listed = listed
        memo = PlanMemo(storeName: reader.store.displayName, owner: owner, databaseToken: feed.token)
        touched = Set((feed.changedZones + feed.deletedZones).map(\.zoneName))
        existing = Set(listed.map(\.zoneID.zoneName))
        self.previous = previous
        for (index, zone) in zones.enumerated() {
            guard let previous, let zoneDigest = digests[index], let known = previous.zones[zone.name],
                known.digest == zoneDigest || Self.onlyMoved(known, placeless: placeless[index]),
                !touched.contains(zone.name), known.exists == existing.contains(zone.name)
            else { continue }
            remembered[index] = known
        }
    }

    /// Whether a zone the last plan found as declared differs from its declaration now only in the places its
    /// shares are written at, and that plan gave it no note or waiting line (the only text of its plan that
    /// could name a place).
    static func onlyMoved(_ known: PlanMemo.Zone, placeless: String?) -> Bool {
        guard let placeless, let before = known.placeless else { return false }
        return before == placeless && known.notes.isEmpty && known.waiting.isEmpty
    }
}
