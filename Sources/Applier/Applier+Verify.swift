import Foundation
import Logging
import PlanModel
import ShareKit

// MARK: - Verifying a saved plan

extension Applier {
    /// Signs in, creating nothing, the users a plan read from another process found (over `http:` a new
    /// process holds no tokens for them yet).
    /// - Throws: `PlannerError.stalePlan` when the store's users changed since the plan.
    func signInKnownUsers(_ plan: Plan) async throws {
        var changed: [String] = []
        // A store that acts only as its signed-in user (cloudkit:) signs in nobody else: only the owner counts.
        let users = (store.capabilities.actsAsAnyUser ? plan.users + [plan.owner] : [plan.owner]).filter {
            !($0.email ?? "").isEmpty
        }
        // All in one call: over `http:` 200 users a request rather than one; the owner readied for the reads
        // of the check and the writes after it, several at once (`UserSignIn.calls`).
        let signIns = users.map {
            UserSignIn(email: $0.email ?? "", calls: $0.handle == plan.owner.handle ? parallelism : 1)
        }
        let results: [Result<User?, ShareError>]
        do {
            results = try await store.signInExisting(signIns)
        } catch let error as ShareError {
            throw PlannerError.storeFailed(operation: "signing in users", subject: store.displayName, error)
        }
        for (user, result) in zip(users, results) {
            let found: User?
            switch result {
            case .success(let signedIn): found = signedIn
            case .failure(let error):
                throw PlannerError.storeFailed(
                    operation: "signing in as \(user.handle)", subject: user.email ?? "", error)
            }
            if (found?.recordName ?? "") != user.recordName {
                let email = user.email ?? ""
                changed.append(
                    user.isNew
                        ? "user \(user.handle) (\(email)) was created"
                        : "user \(user.handle) (\(email)) is no longer the same")
            }
        }
        if !changed.isEmpty { throw PlannerError.stalePlan(changes: Array(Set(changed)).sorted()) }
    }

    /// Checks that the store still holds the state `plan` was computed from: its users, zones, shares, the
    /// records its recipe declares and those it writes. Records the plan neither declares nor writes may
    /// change (another person's note in a shared zone): CloudKit's change tags tell them apart.
    /// - Returns: the changes passed over, to be said.
    /// - Throws: `PlannerError.stalePlan` naming every user, zone, record and share that changed.
    @discardableResult
    public func verify(_ plan: Plan) async throws -> [String] {
        guard plan.storeName == store.displayName else {
            throw PlannerError.wrongStore(planned: plan.storeName, actual: store.displayName)
        }
        let parts = plan.ownerParts
        guard parts.count > 1 else { return try await verifyPart(plan) }
        // Every owner's zones read as their owner; what changed anywhere is said together.
        var passedOver: [String] = []
        var differences: [String] = []
        for part in parts {
            do {
                passedOver += try await verifyPart(part)
            } catch PlannerError.stalePlan(let changes) {
                differences += changes
            }
        }
        if !differences.isEmpty { throw PlannerError.stalePlan(changes: Array(Set(differences)).sorted()) }
        return passedOver
    }

    /// `verify` of a plan of one owner's zones, read as that owner.
    private func verifyPart(_ plan: Plan) async throws -> [String] {
        try await signInKnownUsers(plan)
        let reader = LiveStateReader(
            store: store, owner: plan.owner.recordName, logger: logger, parallelism: parallelism)
        // An owner the store did not have when the plan was made, and still does not (`signInKnownUsers`),
        // owns nothing, and there is no one to read as: the planner read nothing either. (Reading as nobody
        // failed over http: with "no web auth token for user".)
        let live =
            plan.owner.isNew
            ? LiveState(zones: [:], publicRecords: [:], storeCalls: 0)
            : try await reader.read(
                zoneNames: plan.basis.zones.map(\.zoneName), publicRecordNames: plan.basis.publicRecordNames)
        var differences: [String] = []
        var passedOver: [String] = []
        var written: [String: Set<String>] = [:]
        for change in plan.changes where change.kind == .record && change.database == .private {
            if let name = change.recordName { written[change.zoneName, default: []].insert(name) }
        }
        for zone in plan.basis.zones {
            let liveZone = live.zones[zone.zoneName]
            if zone.exists != (liveZone != nil) {
                differences.append("zone \(zone.zoneName) was \(zone.exists ? "deleted" : "created")")
                continue
            }
            let now = liveZone?.tags ?? [:]
            let undeclared = zone.undeclared.map(Set.init)
            let writes = written[zone.zoneName, default: []]
            let tags = zone.tags
            // Only the names whose tags differ are sorted and named: a plan of 100,000 unchanged records has none.
            var differing = Set<String>()
            for (name, tag) in tags where now[name] != tag { differing.insert(name) }
            for name in now.keys where tags[name] == nil { differing.insert(name) }
            for name in differing.sorted() {
                let what = Self.describe(name: name, zone: zone.zoneName, live: liveZone)
                let difference: String
                switch (tags[name], now[name]) {
                case (nil, _?): difference = "\(what) was created"
                case (_?, nil): difference = "\(what) was deleted"
                case (let before?, let after?) where before != after:
                    difference = "\(what) changed (change tag \(before) → \(after))"
                default: continue
                }
                // A record the plan neither declares nor writes: undeclared when planned, or created since
                // and not among the plan's writes (a declared record missing then is one the plan creates).
                let isShare = name == zoneShareRecordName || liveZone?.shares[name] != nil
                if let undeclared, !isShare, !writes.contains(name),
                    undeclared.contains(name) || tags[name] == nil
                {
                    passedOver.append(difference)
                } else {
                    differences.append(difference)
                }
            }
        }
        for name in plan.basis.publicRecordNames {
            let what = "record (public)/\(name)"
            switch (
                plan.basis.publicTags[name],
                live.publicRecords[name]?.changeTag ?? live.publicRecords[name].map { _ in "" }
            ) {
            case (nil, _?): differences.append("\(what) was created")
            case (_?, nil): differences.append("\(what) was deleted")
            case (let before?, let after?) where before != after:
                differences.append("\(what) changed (change tag \(before) → \(after))")
            default: break
            }
        }
        differences += Self.changedAssetFiles(plan)
        if !differences.isEmpty { throw PlannerError.stalePlan(changes: differences) }
        return passedOver
    }

    /// The asset files a plan uploads whose bytes are no longer those planned (the digest in their
    /// `ASSETID` text), or that are gone.
    static func changedAssetFiles(_ plan: Plan) -> [String] {
        var changed: [String] = []
        for (text, path) in (plan.assetFiles ?? [:]).sorted(by: { $0.value < $1.value }) {
            guard let planned = AssetValue(text: text)?.checksum else { continue }
            guard let data = FileManager.default.contents(atPath: path) else {
                changed.append("asset file \(path) is gone")
                continue
            }
            let now = FNV1a64.checksum(of: data)
            if now != planned { changed.append("asset file \(path) changed (\(planned) → \(now))") }
        }
        return changed
    }

    private static func describe(name: String, zone: String, live: LiveZone?) -> String {
        if name == zoneShareRecordName { return "share \(zone)" }
        if let share = live?.shares[name] {
            return share.rootRecordName.map { "share \(zone)/\($0)" } ?? "share \(zone)"
        }
        return "record \(zone)/\(name)"
    }
}
