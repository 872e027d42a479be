import Logging
import PlanModel
import ShareKit

/// The live state of the zones and public records a plan is about, as the owner sees it.
package struct LiveState: Sendable {
    /// Declared zones that exist, by name.
    package var zones: [String: LiveZone]
    /// Public records that exist, by record name.
    package var publicRecords: [String: Record]
    /// The store calls the read made.
    package var storeCalls: Int

    package init(zones: [String: LiveZone], publicRecords: [String: Record], storeCalls: Int) {
        self.zones = zones
        self.publicRecords = publicRecords
        self.storeCalls = storeCalls
    }
}

/// One live zone: its records and shares.
package struct LiveZone: Sendable {
    package var zoneID: ZoneID
    package var records: [String: Record]
    /// Record names in the order the store returned them.
    package var recordOrder: [String]
    /// Shares by record name.
    package var shares: [String: Share]

    package init(zoneID: ZoneID, records: [String: Record], recordOrder: [String], shares: [String: Share]) {
        self.zoneID = zoneID
        self.records = records
        self.recordOrder = recordOrder
        self.shares = shares
    }

    /// The zone-wide share, if the zone is shared as a whole.
    package var zoneShare: Share? { shares[zoneShareRecordName] }

    /// The hierarchy share rooted at `record`, if any.
    package func share(rootedAt record: String) -> Share? {
        if let name = records[record]?.shareRecordName, let share = shares[name] { return share }
        return shares.values.first { $0.rootRecordName == record }
    }

    /// Every record and share by record name: its change tag.
    package var tags: [String: String] {
        var tags: [String: String] = [:]
        for (name, record) in records { tags[name] = record.changeTag ?? "" }
        for (name, share) in shares { tags[name] = share.changeTag ?? "" }
        return tags
    }

    /// How deep `record` sits under its parents (0 for a record without a parent in this zone).
    package func depth(of record: String) -> Int {
        var depth = 0
        var seen: Set<String> = [record]
        var current = records[record]?.parent
        while let name = current, let parent = records[name], !seen.contains(name) {
            seen.insert(name)
            depth += 1
            current = parent.parent
        }
        return depth
    }
}

/// Reads live state with as few store calls as the store allows: one zone listing, then each zone's
/// changes since the beginning (records and shares together, paged by the store), and public records by
/// batched lookups of at most 200 names.
package struct LiveStateReader: Sendable {
    package let store: any Store
    package let owner: UserRecordName
    package let logger: Logger
    /// The most store calls under way at once (`plan --parallelism`).
    package var parallelism = Parallelism.default

    package init(store: any Store, owner: UserRecordName, logger: Logger, parallelism: Int = Parallelism.default) {
        self.store = store
        self.owner = owner
        self.logger = logger
        self.parallelism = parallelism
    }

    /// CloudKit's limit of records a lookup may name.
    package static let lookupBatchSize = CloudKitLimits.operationsPerRequest
    /// How many zones the embedded store reads at once (it reads on several connections); other stores read
    /// `parallelism` zones at once.
    package static let localZonesInFlight = 3
    package var zonesInFlight: Int { Parallelism.calls(parallelism, for: store, localLimit: Self.localZonesInFlight) }

    package func read(zoneNames: [String], publicRecordNames: [String]) async throws -> LiveState {
        var zones: [String: LiveZone] = [:]
        var calls = try await readZones(zoneNames) { index, read in zones[zoneNames[index]] = read?.zone }
        let (publicRecords, publicCalls) = try await readPublic(publicRecordNames)
        calls += publicCalls
        logger.debug("read the live state in \(calls) store calls")
        return LiveState(zones: zones, publicRecords: publicRecords, storeCalls: calls)
    }

    /// Reads the private zones named, a few at a time, and hands each to `body` with its index in
    /// `zoneNames`, in that order (nil for a zone that does not exist), as soon as it and every zone before it
    /// are read: the caller works on one zone while the next ones are read. The SQLite store reads on several
    /// connections at once; a remote store has several requests under way.
    /// - Returns: the number of store calls made.
    package func readZones(
        _ zoneNames: [String], listed known: [Zone]? = nil,
        _ body: (Int, (zone: LiveZone, token: ChangeToken?)?) throws -> Void
    ) async throws -> Int {
        guard !zoneNames.isEmpty else { return 0 }
        var calls = 0
        let listed: [Zone]
        if let known {
            listed = known
        } else {
            listed = try await listZones()
            calls += 1
        }
        let live = Dictionary(listed.map { ($0.zoneID.zoneName, $0.zoneID) }, uniquingKeysWith: { a, _ in a })
        var nextToHand = 0
        var ready: [Int: (zone: LiveZone, token: ChangeToken?)?] = [:]
        // Zones are read a few at a time and handed to `body` in the order asked, each as soon as it and
        // every zone before it are read.
        try await BoundedTasks.run(Array(zoneNames.indices), limit: zonesInFlight) { index in
            guard let zoneID = live[zoneNames[index]] else {
                return Result<(LiveZone, Int, ChangeToken?)?, any Error>.success(nil)
            }
            return await BoundedTasks.result { try await readZone(zoneID, database: .private) }.map { $0 }
        } receive: { (index, read) throws(any Error) in
            switch read {
            case .success(let zone?):
                calls += zone.1
                ready[index] = .some((zone.0, zone.2))
            case .success(nil): ready[index] = .some(nil)
            case .failure(let error): throw error
            }
            while let zone = ready.removeValue(forKey: nextToHand) {
                try body(nextToHand, zone)
                nextToHand += 1
            }
        }
        return calls
    }

    /// The owner's private zones.
    package func listZones() async throws -> [Zone] {
        do {
            return try await store.listZones(in: .private, as: owner)
        } catch let error as ShareError {
            throw PlannerError.storeFailed(operation: "listing zones", subject: store.displayName, error)
        }
    }

    /// The owner's private database's changes since `token`, following the store's pages: the zones changed,
    /// the zones deleted, and the token to read from next time.
    package func databaseChanges(since token: ChangeToken?) async throws -> (DatabaseChanges, calls: Int) {
        var changed: [ZoneID] = []
        var deleted: [ZoneID] = []
        let ending = try await store.followDatabaseChanges(in: .private, since: token, as: owner) { page in
            changed += page.changedZones
            deleted += page.deletedZones
            return true
        }
        return (
            DatabaseChanges(
                changedZones: changed, deletedZones: deleted, token: ending.token,
                moreComing: false),
            ending.calls
        )
    }

    /// The public records named that exist, looked up 200 at a time, and the number of store calls made.
    package func readPublic(_ publicRecordNames: [String]) async throws -> ([String: Record], Int) {
        var calls = 0
        var publicRecords: [String: Record] = [:]
        var start = 0
        while start < publicRecordNames.count {
            let batch = Array(publicRecordNames[start..<min(start + Self.lookupBatchSize, publicRecordNames.count)])
            start += batch.count
            let outcomes: [RecordOutcome]
            do {
                outcomes = try await store.lookupRecords(batch, in: .defaultZone, database: .public, as: owner)
            } catch let error as ShareError {
                throw PlannerError.storeFailed(
                    operation: "looking up public records", subject: store.displayName, error)
            }
            calls += 1
            for (name, outcome) in zip(batch, outcomes) {
                switch outcome {
                case .saved(let record): publicRecords[record.recordName] = record
                case .failed(_, let error) where error.code == .notFound: continue
                case .failed(_, let error):
                    throw PlannerError.storeFailed(operation: "looking up public record", subject: name, error)
                case .savedShare, .deleted: continue
                }
            }
        }
        return (publicRecords, calls)
    }

    /// Every record and share of one zone, following the store's pages.
    package func readZone(_ zoneID: ZoneID, database: DatabaseScope) async throws -> (LiveZone, Int, ChangeToken?) {
        let whole: WholeZone
        do {
            whole = try await store.wholeZone(zoneID, in: database, as: owner)
        } catch let error as ShareError {
            throw PlannerError.storeFailed(operation: "reading zone", subject: zoneID.zoneName, error)
        }
        let zone = LiveZone(
            zoneID: zoneID,
            records: Dictionary(whole.records.map { ($0.recordName, $0) }, uniquingKeysWith: { _, b in b }),
            recordOrder: whole.records.map(\.recordName),
            shares: Dictionary(whole.shares.map { ($0.recordName, $0) }, uniquingKeysWith: { _, b in b }))
        return (zone, whole.calls, whole.token)
    }
}
