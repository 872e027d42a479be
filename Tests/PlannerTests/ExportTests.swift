import Applier
import Foundation
import PlanModel
import SharelaneTestSupport
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

@Suite("Export")
struct ExportTests {
    func export(_ store: SQLiteStore, zones: [String] = []) async throws -> String {
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        return try await Exporter(store: store, logger: quietLogger).export(owner: alice, zones: zones)
    }

    func load(_ yaml: String) throws -> Recipe {
        do {
            return try RecipeLoader(environment: [:]).load(yaml: yaml, file: "exported.yaml")
        } catch {
            Issue.record(
                "the export does not load:\n\(error.errors.map(\.description).joined(separator: "\n"))\n\(yaml)")
            throw error
        }
    }

    @Test("the export of an applied recipe plans to no changes against the same store")
    func roundTrip() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(SampleRecipes.family()))
        let yaml = try await export(store)
        #expect(yaml.contains("privateShareURL: !share-url FamilyLists"))
        #expect(yaml.contains("trip: !ref italy"))
        #expect(yaml.contains("bob: {permission: read-write, accepted: false}"))
        let exported = try load(yaml)
        #expect(exported.owner == "alice")
        let plan = try await planner.plan(exported)
        #expect(plan.changes == [], "\(PlanFormat.text.render(plan))")
        #expect(plan.notes == [])
    }

    @Test(
        "an export round-trips assets, full locations, references naming a zone, the container and environment; --owner exports only that owner's public records"
    )
    func roundTripOfEveryValueForm() async throws {
        let scratch = try TemporaryDirectory("export")
        let directory = scratch.url
        try Data("picture".utf8).write(to: directory.appendingPathComponent("pic.png"))
        let recipePath = directory.appendingPathComponent("fasting.yaml").path
        try """
        sharelane: 1
        name: fasting
        container: iCloud.com.example.Fasting
        environment: production
        users: { alice: { email: alice@example.com }, bob: { email: bob@example.com } }
        owner: alice
        zones:
          Fasting:
            records:
              f1:
                type: Fast
                fields:
                  pic: !asset pic.png
                  where: { latitude: 48.85, longitude: 2.35, altitude: 35.5, horizontal_accuracy: 5, course: 90, timestamp: 2024-05-01T09:00:00Z }
                  next: { ref: f2, zone: Fasting }
                  checked: { ref: f2, zone: Fasting, action: validate }
              f2: { type: Fast, fields: { n: 2 } }
        public:
          records:
            alice-card: { type: Card, fields: { name: Alice } }
        """.write(toFile: recipePath, atomically: true, encoding: .utf8)
        let recipe = try RecipeLoader(environment: [:]).load(path: recipePath)
        let store = try freshStore()
        // The store keeps the bytes of `!asset` files from beside the recipe, as the plan says.
        // A production recipe needs its schema deployed first, as in CloudKit.
        _ = try await store.extendSchema(recipe.schema.schema, as: "")
        _ = try await store.deploySchema(as: "")
        let planner = Planner(store: store, logger: quietLogger)
        let report = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        #expect(report.succeeded)
        let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
        // Text that the loader would expand, written behind the recipe's back.
        let note = Record(
            recordName: "f2", recordType: "Fast", zoneID: ZoneID(zoneName: "Fasting"),
            fields: ["note": .string("costs ${price} {{i}} and $${x}")])
        _ = try await store.modifyRecords(
            [RecordOperation(.forceUpdate, note)], in: ZoneID(zoneName: "Fasting"), database: .private, atomic: true,
            as: alice.recordName)
        // The new field was saved in development: production has it once deployed.
        _ = try await store.deploySchema(as: alice.recordName)
        let yaml = try await Exporter(store: store, logger: quietLogger).export(
            owner: alice, name: "fasting", container: recipe.container, environment: recipe.environment.rawValue)
        #expect(yaml.contains("container: iCloud.com.example.Fasting"))
        #expect(yaml.contains("environment: production"))
        #expect(yaml.contains("next: {ref: f2, zone: Fasting}"))
        #expect(yaml.contains("altitude: 35.5"))
        let exported = try load(yaml)
        #expect(exported.container == recipe.container)
        #expect(exported.environment == .production)
        let plan = try await planner.plan(exported)
        #expect(plan.changes == [], "\(PlanFormat.text.render(plan))")

        // Bob owns no public record: his export has none of alice's.
        let bob = try await store.signIn(email: "bob@example.com", name: nil)
        let bobs = try await Exporter(store: store, logger: quietLogger).export(owner: bob)
        #expect(!bobs.contains("alice-card"), "\(bobs)")
        #expect(try load(bobs).publicRecords.isEmpty)
    }

    @Test(
        "a public user who joined a public share is not exported (a recipe cannot name one); the export plans to no changes"
    )
    func publicUsersAreNotExported() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(SampleRecipes.family()))
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let carol = try await store.signIn(email: "carol@example.com", name: nil)
        let trips = ZoneID(zoneName: "Trips")
        guard
            case .saved(let italy)? = try await store.lookupRecords(
                ["italy"], in: trips, database: .private, as: alice.recordName
            ).first,
            let shareName = italy.shareRecordName,
            case .savedShare(let share)? = try await store.lookupRecords(
                [shareName], in: trips, database: .private, as: alice.recordName
            ).first,
            let url = share.url
        else {
            Issue.record("the Trips/italy share is missing")
            return
        }
        _ = try await store.acceptShare(url: url, as: carol.recordName)

        let yaml = try await export(store)
        #expect(!yaml.contains("public-user"), "\(yaml)")
        let plan = try await planner.plan(try load(yaml))
        #expect(plan.changes == [], "\(PlanFormat.text.render(plan))")
    }

    @Test(
        "values YAML would misread come back as the same values: \"42\", \"yes\", 3.0, milliseconds, bytes, references")
    func awkwardValues() async throws {
        let store = try freshStore()
        let alice = try await store.signIn(email: "alice@example.com", name: "Alice")
        let zone = ZoneID(zoneName: "Odd")
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice.recordName)
        let fields: [String: FieldValue] = [
            "number_like": .string("42"), "bool_like": .string("yes"), "null_like": .string("null"),
            "spaced": .string(" padded "), "quote": .string("say \"hi\": now"), "multi": .string("two\nlines"),
            "whole": .double(3), "tiny": .double(1e-7), "negative": .int64(-5),
            "when": .timestamp(1_714_554_000_123), "blob": .bytes(Data([0, 1, 2, 250])),
            "target": .reference(Reference(recordName: "a", action: .deleteSelf)),
            "where": .location(Location(latitude: 48.85, longitude: 2.35)),
            "tags": .list(elementType: .string, [.string("x"), .string("1")]),
            "counts": .list(elementType: .int64, [.int64(1), .int64(2)]),
        ]
        _ = try await store.modifyRecords(
            [
                RecordOperation(.create, Record(recordName: "a", recordType: "Thing", zoneID: zone)),
                RecordOperation(.create, Record(recordName: "b", recordType: "Thing", zoneID: zone, fields: fields)),
            ], in: zone, database: .private, atomic: true, as: alice.recordName)
        let yaml = try await export(store, zones: ["Odd"])
        let exported = try load(yaml)
        let record = try #require(exported.zone("Odd")?.records.first { $0.name == "b" })
        for (name, value) in fields {
            #expect(record.fields[name] == .value(value), "field \(name)")
        }
        let plan = try await Planner(store: store, logger: quietLogger).plan(exported)
        #expect(plan.changes == [], "\(PlanFormat.text.render(plan))\n\(yaml)")
    }

    @Test("--zone names a zone that does not exist: an error naming it")
    func unknownZone() async throws {
        let store = try freshStore()
        await #expect(throws: PlannerError.zoneNotFound(zone: "Nope")) {
            _ = try await export(store, zones: ["Nope"])
        }
    }

    @Test("a record whose parent or VALIDATE target was deleted exports as a valid recipe that plans to no changes")
    func danglingParentAndReferenceExport() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: """
                sharelane: 1
                name: dangling
                users: { alice: { email: alice@example.com } }
                zones:
                  Z1:
                    records:
                      r5:
                        type: Task
                        children:
                          r6: { type: Item, fields: { f2: { ref: r5, action: validate } } }
                """, file: "dangling.yaml")
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
        _ = try await store.modifyRecords(
            [RecordOperation(.forceDelete, Record(recordName: "r5", recordType: "", zoneID: ZoneID(zoneName: "Z1")))],
            in: ZoneID(zoneName: "Z1"), database: .private, atomic: true, as: alice.recordName)
        let yaml = try await export(store)
        #expect(yaml.contains("r5: {type: Missing, absent: true}"), "\(yaml)")
        let plan = try await planner.plan(try load(yaml))
        #expect(plan.changes == [], "\(PlanFormat.text.render(plan))")
    }
}
