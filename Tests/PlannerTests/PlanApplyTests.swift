import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

@Suite("Plan and apply")
struct PlanApplyTests {
    @Test("a fresh store: the plan creates everything; after apply the same recipe plans to no changes")
    func applyThenNoChanges() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        let plan = try await planner.plan(recipe)
        #expect(plan.summary.line == "Plan: 14 to add, 0 to change, 0 to destroy.")
        #expect(plan.changes.first?.address == "zone FamilyLists")
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [])
        #expect(report.line == "Apply complete! Resources: 14 added, 0 changed, 0 destroyed.")

        let again = try await planner.plan(recipe)
        #expect(again.changes == [])
        #expect(again.summary.line == "Plan: 0 to add, 0 to change, 0 to destroy.")
        #expect(again.waiting == [])
    }

    @Test("the plan's order: zones, records parents before children, shares, participants, public records")
    func stableOrder() async throws {
        let store = try freshStore()
        let plan = try await Planner(store: store, logger: quietLogger).plan(SampleRecipes.family())
        let addresses = plan.changes.map(\.address)
        #expect(
            addresses == [
                "zone FamilyLists", "zone Trips",
                "record FamilyLists/groceries", "record FamilyLists/milk",
                "record Trips/italy", "record Trips/hotel", "record Trips/day-1", "record Trips/day-2",
                "record Trips/day-3",
                "share FamilyLists", "share Trips/italy",
                "participant FamilyLists/bob", "participant FamilyLists/dana",
                "record (public)/alice-card",
            ])
        // The same recipe against the same store plans the same way.
        let again = try await Planner(store: store, logger: quietLogger).plan(SampleRecipes.family())
        #expect(again == plan)
    }

    @Test("the public record's !share-url holds the URL of the share created in the same apply")
    func shareURLResolvedAfterSave() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        let plan = try await Planner(store: store, logger: quietLogger).plan(recipe)
        let card = try #require(plan.changes.first { $0.address == "record (public)/alice-card" })
        #expect(
            card.attributes.first { $0.name == "privateShareURL" }?.after == .shareURL(zone: "FamilyLists", record: nil)
        )
        _ = try await Applier(store: store, logger: quietLogger).apply(plan)
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let zone = try #require(
            try await store.listZones(in: .private, as: alice.recordName).first { $0.zoneID.zoneName == "FamilyLists" })
        let shares = try await store.lookupRecords(
            [zoneShareRecordName], in: zone.zoneID, database: .private, as: alice.recordName)
        guard case .savedShare(let share)? = shares.first else {
            Issue.record("no zone share: \(shares)")
            return
        }
        let records = try await store.lookupRecords(
            ["alice-card"], in: .defaultZone, database: .public, as: alice.recordName)
        guard case .saved(let record)? = records.first else {
            Issue.record("no public record: \(records)")
            return
        }
        #expect(share.url != nil)
        #expect(record.fields["privateShareURL"] == share.url.map(FieldValue.string))
    }

    @Test("participants: bob is added pending (accepted: false), dana is added and accepts as herself")
    func participantsAndAcceptance() async throws {
        let store = try freshStore()
        let plan = try await Planner(store: store, logger: quietLogger).plan(SampleRecipes.family())
        _ = try await Applier(store: store, logger: quietLogger).apply(plan)
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let outcomes = try await store.lookupRecords(
            [zoneShareRecordName], in: ZoneID(zoneName: "FamilyLists"), database: .private, as: alice.recordName)
        guard case .savedShare(let share)? = outcomes.first else {
            Issue.record("no share: \(outcomes)")
            return
        }
        let byEmail = Dictionary(uniqueKeysWithValues: share.participants.compactMap { p in p.email.map { ($0, p) } })
        #expect(byEmail["bob@example.com"]?.acceptance == .pending)
        #expect(byEmail["bob@example.com"]?.permission == .readWrite)
        #expect(byEmail["dana@example.com"]?.acceptance == .accepted)
        #expect(share.title == "Family lists")
    }

    @Test("undeclared records are kept and counted; --prune deletes them, children first")
    func undeclaredKeptThenPruned() async throws {
        let store = try freshStore()
        var recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        // Three records written behind the recipe's back: one with a child.
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let zone = ZoneID(zoneName: "FamilyLists")
        _ = try await store.modifyRecords(
            [
                RecordOperation(.create, Record(recordName: "extra", recordType: "TodoList", zoneID: zone)),
                RecordOperation(
                    .create, Record(recordName: "extra-child", recordType: "Todo", zoneID: zone, parent: "extra")),
                RecordOperation(.create, Record(recordName: "loose", recordType: "Todo", zoneID: zone)),
            ], in: zone, database: .private, atomic: true, as: alice.recordName)
        let kept = try await planner.plan(recipe)
        #expect(kept.changes == [])
        // Named, so that a reviewer knows which.
        #expect(
            kept.notes == [
                "3 undeclared records kept in FamilyLists: extra, extra-child and loose; --prune deletes them."
            ])

        let pruned = try await planner.plan(recipe, options: PlanOptions(prune: true))
        #expect(
            pruned.changes.map(\.address) == [
                "record FamilyLists/extra-child", "record FamilyLists/extra", "record FamilyLists/loose",
            ])
        #expect(pruned.summary.line == "Plan: 0 to add, 0 to change, 3 to destroy.")
        let report = try await Applier(store: store, logger: quietLogger).apply(pruned)
        #expect(report.failures == [])
        recipe.zones[0].prune = true
        #expect(try await planner.plan(recipe).changes == [])
    }

    @Test("field changes show before → after; undeclared fields are kept unless pruned")
    func fieldLevelChanges() async throws {
        let store = try freshStore()
        var recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let zone = ZoneID(zoneName: "FamilyLists")
        let live = try await store.lookupRecords(["milk"], in: zone, database: .private, as: alice.recordName)
        guard case .saved(var milk)? = live.first else {
            Issue.record("no milk")
            return
        }
        milk.fields["note"] = .string("semi-skimmed")
        _ = try await store.modifyRecords(
            [RecordOperation(.update, milk)], in: zone, database: .private, atomic: true, as: alice.recordName)

        recipe.zones[0].records[1].fields["qty"] = .value(.int64(3))
        let plan = try await planner.plan(recipe)
        #expect(plan.changes.count == 1)
        let change = try #require(plan.changes.first)
        #expect(change.address == "record FamilyLists/milk")
        #expect(change.action == .update)
        #expect(
            change.attributes == [
                AttributeChange(name: "qty", isField: true, before: .value(.int64(2)), after: .value(.int64(3)))
            ])

        let pruned = try await planner.plan(recipe, options: PlanOptions(prune: true))
        #expect(pruned.changes.first?.attributes.map(\.name) == ["qty", "note"])
        #expect(pruned.changes.first?.attributes.last?.after == nil)
        _ = try await Applier(store: store, logger: quietLogger).apply(pruned)
        let after = try await store.lookupRecords(["milk"], in: zone, database: .private, as: alice.recordName)
        guard case .saved(let newMilk)? = after.first else {
            Issue.record("no milk")
            return
        }
        #expect(newMilk.fields["note"] == nil)
        #expect(newMilk.fields["qty"] == .int64(3))
        #expect(newMilk.parent == "groceries")
    }

    @Test("absent, share: none and a complete participant list")
    func absentShareNoneAndParticipants() async throws {
        let store = try freshStore()
        var recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))

        recipe.zones[0].records[1].absent = true  // milk
        recipe.zones[1].records[0].share = ShareDeclaration.none  // italy: stop sharing
        guard case .share(var share)? = recipe.zones[0].share else { return }
        share.participants.removeAll { $0.handle == "dana" }
        share.participants.append(
            DeclaredParticipant(handle: "carol", permission: .readOnly, location: SampleRecipes.at(8)))
        share.participants[0].permission = .readOnly  // bob
        recipe.zones[0].share = .share(share)
        let plan = try await planner.plan(recipe)
        #expect(
            plan.changes.map { "\($0.symbol) \($0.address)" } == [
                "~ participant FamilyLists/bob", "+ participant FamilyLists/carol", "- participant FamilyLists/dana",
                "- record FamilyLists/milk", "- share Trips/italy",
            ])
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [])
        #expect(try await planner.plan(recipe).changes == [])

        recipe.zones[1].absent = true
        let dropZone = try await planner.plan(recipe)
        #expect(dropZone.changes.map(\.address) == ["zone Trips"])
        #expect(dropZone.changes.first?.deletedRecordCount == 5)
        _ = try await Applier(store: store, logger: quietLogger).apply(dropZone)
        #expect(try await planner.plan(recipe).changes == [])
    }

    @Test("public users who joined a public share through its URL are kept, also when the share is saved again")
    func publicUsersAreKept() async throws {
        let store = try freshStore()
        var recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))

        // Carol opens the URL of the public Trips/italy share and joins it as a public user.
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let carol = try await store.signIn(email: "carol@example.com", name: nil)
        let outcomes = try await store.lookupRecords(
            ["italy"], in: ZoneID(zoneName: "Trips"), database: .private, as: alice.recordName)
        guard case .saved(let italy)? = outcomes.first, let shareName = italy.shareRecordName else {
            Issue.record("italy has no share: \(outcomes)")
            return
        }
        let shares = try await store.lookupRecords(
            [shareName], in: ZoneID(zoneName: "Trips"), database: .private, as: alice.recordName)
        guard case .savedShare(let share)? = shares.first, let url = share.url else {
            Issue.record("no share URL: \(shares)")
            return
        }
        _ = try await store.acceptShare(url: url, as: carol.recordName)
        #expect(try await planner.plan(recipe).changes == [])

        // A change to the share's title saves the share again; Carol stays in it.
        guard case .share(var declared)? = recipe.zones[1].records[0].share else { return }
        declared.title = "Italy"
        recipe.zones[1].records[0].share = .share(declared)
        let retitle = try await planner.plan(recipe)
        #expect(retitle.changes.map { "\($0.symbol) \($0.address)" } == ["~ share Trips/italy"])
        #expect(try await Applier(store: store, logger: quietLogger).apply(retitle).failures == [])
        let after = try await store.lookupRecords(
            [shareName], in: ZoneID(zoneName: "Trips"), database: .private, as: alice.recordName)
        guard case .savedShare(let saved)? = after.first else {
            Issue.record("share gone: \(after)")
            return
        }
        #expect(saved.title == "Italy")
        #expect(saved.participants.map(\.userRecordName) == [carol.recordName])
        #expect(saved.participants.first?.role == .publicUser)
    }

    @Test("a zone with no share: key leaves a live share alone")
    func noShareKeyLeavesShareAlone() async throws {
        let store = try freshStore()
        var recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        recipe.zones[0].share = nil
        recipe.zones[1].records[0].share = nil
        #expect(try await planner.plan(recipe).changes == [])
    }

    @Test("a store that cannot act as others lists acceptances as waiting, not as changes or errors")
    func waitingForAcceptance() async throws {
        let store = OwnerOnlyStore(try freshStore())
        let plan = try await Planner(store: store, logger: quietLogger).plan(SampleRecipes.family())
        #expect(
            plan.waiting == [
                "participant FamilyLists/dana: waiting for dana to accept (the store cannot act as dana)"
            ])
        let dana = try #require(plan.changes.first { $0.address == "participant FamilyLists/dana" })
        #expect(dana.participant?.accept == false)
        // Once the share is made, the line gives the link to send her.
        _ = try await Applier(store: store, logger: quietLogger).apply(plan)
        let again = try await Planner(store: store, logger: quietLogger).plan(SampleRecipes.family())
        let line = try #require(again.waiting.first)
        #expect(again.waiting.count == 1, "\(again.waiting)")
        let prefix =
            "participant FamilyLists/dana: waiting for dana to accept (the store cannot act as dana); send them "
        #expect(line.hasPrefix(prefix), "\(line)")
        #expect(line.dropFirst(prefix.count).hasPrefix("http"), "\(line)")
    }

    @Test("writes go in batches of at most 200, each new hierarchy share in the batch of its root record")
    func batching() async throws {
        let counting = CountingStore(try freshStore())
        var recipe = SampleRecipes.family(days: 450)
        // Put the shared root last, so that a naive split would separate it from its share.
        let italy = recipe.zones[1].records.removeFirst()
        recipe.zones[1].records.insert(italy, at: 0)
        let plan = try await Planner(store: counting, logger: quietLogger).plan(recipe)
        let report = try await Applier(store: counting, logger: quietLogger).apply(plan)
        #expect(report.failures == [])
        let batches = counting.modifyBatches
        #expect(batches.allSatisfy { $0.count <= 200 })
        let shareBatch = try #require(
            batches.first {
                $0.contains { if case .share(let s) = $0.item { s.rootRecordName == "italy" } else { false } }
            })
        #expect(shareBatch.contains { $0.recordName == "italy" })
        #expect(try await Planner(store: counting, logger: quietLogger).plan(recipe).changes == [])
    }

    @Test("a !share-url may name the share of a zone declared after its record's zone; a second plan is empty")
    func shareURLOfALaterZone() async throws {
        let yaml = """
            sharelane: 1
            name: forward
            users:
              alice: { email: alice@example.com }
              bob: { email: bob@example.com }
            owner: alice
            zones:
              First:
                records:
                  pointer: { type: Note, fields: { link: !share-url Second } }
              Second:
                share: { participants: { bob: read-only } }
                records:
                  item: { type: Note, fields: { title: Item } }
            """
        let recipe = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "forward.yaml")
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        let report = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        #expect(report.failures == [])
        let again = try await planner.plan(recipe)
        #expect(again.changes == [])
        let owner = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let found = try await store.lookupRecords(
            ["pointer"], in: ZoneID(zoneName: "First"), database: .private, as: owner)
        let shares = try await store.lookupRecords(
            [zoneShareRecordName], in: ZoneID(zoneName: "Second"), database: .private, as: owner)
        guard case .saved(let pointer)? = found.first, case .savedShare(let share)? = shares.first else {
            Issue.record("the record or the share is missing: \(found) \(shares)")
            return
        }
        #expect(pointer.fields["link"] == .string(try #require(share.url)))
    }

    @Test("an apply accepts all of one participant's shares in one store call")
    func acceptancesGoOneCallPerParticipant() async throws {
        let yaml = """
            sharelane: 1
            name: accepts
            users:
              alice: { email: alice@example.com }
              bob: { email: bob@example.com }
              carol: { email: carol@example.com }
            owner: alice
            zones:
              One: { share: { participants: { bob: read-only, carol: read-write } } }
              Two: { share: { participants: { bob: read-write } } }
              Three: { share: { participants: { bob: read-only, carol: read-only } } }
            """
        let recipe = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "accepts.yaml")
        let counting = CountingStore(try freshStore())
        let planner = Planner(store: counting, logger: quietLogger)
        let plan = try await planner.plan(recipe)
        #expect(plan.changes.filter { $0.participant?.accept == true }.count == 5)
        counting.resetCounts()
        let report = try await Applier(store: counting, logger: quietLogger).apply(plan)
        #expect(report.failures == [])
        #expect(counting.calls["acceptShares"] == 2)
        #expect(counting.calls["acceptShare"] == nil)
        // Every participant did accept: planning again finds nothing to do.
        #expect(try await planner.plan(recipe).changes == [])
    }

    @Test("a no-op plan makes the same number of store calls for 10 records and for 1,000")
    func boundedStoreCalls() async throws {
        var counts: [Int] = []
        for size in [10, 1000] {
            let counting = CountingStore(try freshStore())
            let recipe = SampleRecipes.generated(count: size)
            let planner = Planner(store: counting, logger: quietLogger)
            _ = try await Applier(store: counting, logger: quietLogger).apply(try await planner.plan(recipe))
            counting.resetCounts()
            let plan = try await planner.plan(recipe)
            #expect(plan.changes == [])
            counts.append(counting.totalCalls)
        }
        #expect(counts[0] == counts[1])
        // The owner's zones, their changes, and the environment's schema (one call, whatever the size).
        #expect(counts[0] <= 4)
    }
}

/// A real store that, like CloudKit Web Services, acts only as the users it signed in as the owner: it says
/// it cannot act as any user.
struct OwnerOnlyStore: Store {
    let base: SQLiteStore
    init(_ base: SQLiteStore) { self.base = base }
    var displayName: String { base.displayName }
    var capabilities: StoreCapabilities { StoreCapabilities(actsAsAnyUser: false, canReset: false, keepsSchema: false) }
    var environment: CloudKitEnvironment { base.environment }
    func inEnvironment(_ environment: CloudKitEnvironment) -> any Store { self }
    func schema(in environment: CloudKitEnvironment, as user: UserRecordName) async throws -> Schema {
        try await base.schema(in: environment, as: user)
    }
    func extendSchema(_ schema: Schema, as user: UserRecordName) async throws -> [SchemaChange] {
        try await base.extendSchema(schema, as: user)
    }
    func deploySchema(as user: UserRecordName) async throws -> [SchemaChange] { try await base.deploySchema(as: user) }
    func signIn(email: String, name: String?) async throws -> User { try await base.signIn(email: email, name: name) }
    // Like a store that creates no users: signing in an existing user is signing in.
    func signInExisting(email: String) async throws -> User? { try await signIn(email: email, name: nil) }
    func canActAs(email: String) async -> Bool { false }
    func finishedWriting() { base.finishedWriting() }
    func setDiscoverability(_ settings: UserDiscoverability, as user: UserRecordName) async throws {
        throw ShareError(.badRequest, "\(displayName) does not set users' discoverability")
    }
    func discoverability(as user: UserRecordName) async throws -> UserDiscoverability { UserDiscoverability() }
    func discoverUsers(_ lookups: [UserLookup], as user: UserRecordName) async throws -> [UserIdentity] {
        throw ShareError(.badRequest, "\(displayName) does not discover users")
    }
    func currentUser(as user: UserRecordName) async throws -> User { try await base.currentUser(as: user) }
    func lookupUsers(emails: [String], as user: UserRecordName) async throws -> [User?] {
        // The other users exist in iCloud: sign them in on the local store so that they can be found.
        var users: [User?] = []
        for email in emails { users.append(try await base.signIn(email: email, name: nil)) }
        return users
    }
    func listZones(in database: DatabaseScope, as user: UserRecordName) async throws -> [Zone] {
        try await base.listZones(in: database, as: user)
    }
    func lookupZones(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    { try await base.lookupZones(zoneIDs, in: database, as: user) }
    func modifyZones(_ operations: [ZoneOperation], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    { try await base.modifyZones(operations, in: database, as: user) }
    func lookupRecords(_ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName)
        async throws -> [RecordOutcome]
    { try await base.lookupRecords(recordNames, in: zoneID, database: database, as: user) }
    func queryRecords(_ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName)
        async throws -> QueryPage
    { try await base.queryRecords(query, in: zoneID, database: database, as: user) }
    func modifyRecords(_ write: ZoneWrite, as user: UserRecordName) async throws -> [RecordOutcome] {
        try await base.modifyRecords(write, as: user)
    }
    func resolveShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try await base.resolveShare(url: url, as: user)
    }
    func acceptShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try await base.acceptShare(url: url, as: user)
    }
    func leaveShare(recordName: String, in zoneID: ZoneID, as user: UserRecordName) async throws {
        try await base.leaveShare(recordName: recordName, in: zoneID, as: user)
    }
    func databaseChanges(in database: DatabaseScope, since token: ChangeToken?, as user: UserRecordName) async throws
        -> DatabaseChanges
    { try await base.databaseChanges(in: database, since: token, as: user) }
    func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName
    ) async throws -> ZoneChanges {
        try await base.zoneChanges(zoneID, in: database, since: token, resultsLimit: resultsLimit, as: user)
    }
    func reset() async throws { try await base.reset() }
}
