import Applier
import Foundation
import PlanModel
import SharelaneTestSupport
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

@Suite("Saved plans and partial failure")
struct SavedPlanTests {
    /// The state of the owner's zones and the public database, to compare before and after.
    func snapshot(_ store: any Store) async throws -> [String: String] {
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        var tags: [String: String] = [:]
        for zone in try await store.listZones(in: .private, as: alice.recordName) {
            let changes = try await store.zoneChanges(
                zone.zoneID, in: .private, since: nil, resultsLimit: nil, as: alice.recordName)
            for record in changes.changedRecords {
                tags["\(zone.zoneID.zoneName)/\(record.recordName)"] = record.changeTag
            }
            for share in changes.changedShares { tags["\(zone.zoneID.zoneName)/\(share.recordName)"] = share.changeTag }
        }
        return tags
    }

    func savedAndRead(_ plan: Plan) throws -> Plan {
        let scratch = try TemporaryDirectory("plan")
        let path = scratch.file("plan.json")
        try SavedPlan.write(plan, to: path)
        return try SavedPlan.read(from: path)
    }

    @Test("a saved plan is applied exactly when the store has not changed")
    func appliedWhenUnchanged() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        var recipe = SampleRecipes.family()
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        recipe.zones[0].records[0].fields["title"] = .value(.string("Weekly groceries"))
        let saved = try savedAndRead(try await planner.plan(recipe))
        let report = try await Applier(store: store, logger: quietLogger).applySaved(saved)
        #expect(report.line == "Apply complete! Resources: 0 added, 1 changed, 0 destroyed.")
        #expect(try await planner.plan(recipe).changes == [])
    }

    @Test("a saved plan carries one format version, the file's; a file of another version is refused by it")
    func oneVersionPerFile() async throws {
        let store = try freshStore()
        let plan = try await Planner(store: store, logger: quietLogger).plan(SampleRecipes.family())
        let scratch = try TemporaryDirectory("plan")
        let path = scratch.file("plan.json")
        try SavedPlan.write(plan, to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        let header = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(header["sharelane_saved_plan"] as? Int == SavedPlan.formatVersion)
        #expect(!lines.dropFirst().contains { $0.lowercased().contains("version") }, "only the first line has one")
        for other in [SavedPlan.formatVersion - 1, SavedPlan.formatVersion + 1] {
            try text.replacingOccurrences(
                of: "\"sharelane_saved_plan\":\(SavedPlan.formatVersion)", with: "\"sharelane_saved_plan\":\(other)"
            ).write(toFile: path, atomically: true, encoding: .utf8)
            let which = other < SavedPlan.formatVersion ? "an older" : "a newer"
            #expect {
                _ = try SavedPlan.read(from: path)
            } throws: { error in
                "\(error)".contains("saved by \(which) sharelane (format \(other))")
            }
        }
    }

    @Test("a plan saved by format 3 (one pretty-printed JSON object) is refused, naming its format and what to do")
    func formatThreeIsRefused() throws {
        let scratch = try TemporaryDirectory("plan")
        let path = scratch.file("plan.json")
        // The shape format 3 had: Foundation's encoding of the plan, keys sorted, the version last.
        let old = """
            {
              "digest" : "sha256:00",
              "plan" : {
                "changes" : [
                  { "attributes" : [], "record" : { "fields" : { "qty" : { "value" : { "_0" : { "int64" : { "_0" : 42 } } } } } } }
                ]
              },
              "sharelane_saved_plan" : 3
            }

            """
        try old.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(SavedPlan.isSavedPlan(at: path))
        #expect {
            _ = try SavedPlan.read(from: path)
        } throws: { error in
            let message = "\(error)"
            return message.contains("saved by an older sharelane (format 3)")
                && message.contains("this one reads format \(SavedPlan.formatVersion)")
                && message.contains("sharelane plan --out \(path)")
        }
    }

    @Test(
        "a saved plan is compact JSON lines in CloudKit's words: typed values, no compiler-made keys, each record once")
    func designedFormat() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        var recipe = SampleRecipes.family()
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        recipe.zones[0].records[0].fields["title"] = .value(.string("Weekly groceries"))
        recipe.zones[0].records[1].fields["qty"] = .value(.int64(6))
        let plan = try await planner.plan(recipe)
        let data = try SavedPlan.encoded(plan)
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("\"_0\""))
        #expect(!text.contains("\n "), "no pretty printing")
        #expect(text.contains(#"{"type":"INT64","value":6}"#))
        #expect(text.components(separatedBy: "Weekly groceries").count == 2, "the new title is written once")
        for line in text.split(separator: "\n") {
            #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any], "\(line)")
        }
        #expect(try SavedPlan.decoded(data) == plan)
    }

    @Test("a saved plan cut short, or with a line that is not the format's, is refused and applies nothing")
    func cutShortIsRefused() async throws {
        let store = try freshStore()
        let plan = try await Planner(store: store, logger: quietLogger).plan(SampleRecipes.family())
        let scratch = try TemporaryDirectory("plan")
        let path = scratch.file("plan.json")
        try SavedPlan.write(plan, to: path)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        try (lines.dropLast().joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try SavedPlan.read(from: path)
        } throws: { error in
            "\(error)".contains("before its digest: the file is not whole")
        }
        var broken = lines
        broken[3] = "{\"action\":\"create\"" + broken[3].dropFirst()
        try (broken.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try SavedPlan.read(from: path)
        } throws: { error in
            "\(error)".contains("it is damaged at line 4, column 19: expected `,` or `}`")
        }
        #expect(throws: PlannerError.self) {
            try SavedPlan.write(plan, to: scratch.file("no-such-folder/plan.json"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) == ["plan.json"])
    }

    @Test("every kind of field value survives a saved plan")
    func everyValue() throws {
        let values: [String: FieldValue] = [
            "string": .string("tab\tquote\"slash/é"), "int": .int64(-42), "double": .double(0.1),
            "big": .double(1e300), "infinite": .double(-.infinity), "timestamp": .timestamp(1_700_000_000_123),
            "bytes": .bytes(Data([0, 1, 254, 255])),
            "reference": .reference(Reference(recordName: "milk", action: .validate)),
            "remote": .reference(Reference(recordName: "x", zoneID: ZoneID(zoneName: "Other"), action: .deleteSelf)),
            "asset": .assetID("photo.jpg#fnv1a64:0123456789abcdef"),
            "location": .location(Location(latitude: 47.37, longitude: 8.54, altitude: 408, timestamp: 5)),
            "strings": .list(elementType: .string, [.string("a"), .string("b")]),
            "empty": .list(elementType: .int64, []),
            "places": .list(elementType: .location, [.location(Location(latitude: 1, longitude: 2))]),
            "mixed": .list(elementType: .string, [.string("a"), .int64(1)]),
        ]
        var plan = Plan(
            recipeName: "values", storeName: "memory:",
            owner: PlannedUser(handle: "alice", email: nil, recordName: "_a"),
            changes: [
                PlannedChange(
                    action: .update, kind: .record, address: "record Lists/milk", zoneName: "Lists", recordName: "milk",
                    attributes: values.keys.sorted().map {
                        AttributeChange(
                            name: $0, isField: true, before: .value(.string("old")), after: .value(values[$0]!))
                    } + [AttributeChange(name: "gone", isField: true, before: .value(.int64(1)), after: nil)],
                    record: PlannedRecord(
                        recordType: "Item", parent: nil, fields: values.mapValues { .value($0) }, operation: .replace),
                    baseChangeTag: "t1"),
                PlannedChange(
                    action: .create, kind: .record, address: "record Lists/link", zoneName: "Lists", recordName: "link",
                    attributes: [
                        AttributeChange(
                            name: "url", isField: true, before: nil, after: .shareURL(zone: "Lists", record: nil))
                    ],
                    record: PlannedRecord(
                        recordType: "Link", parent: "milk", fields: ["url": .shareURL(zone: "Lists", record: "root")],
                        operation: .create)),
            ],
            basis: LiveBasis(zones: [ZoneBasis(zoneName: "Lists", exists: true, tags: ["milk": "t1"])]))
        plan.container = "iCloud.example"
        let read = try SavedPlan.decoded(try SavedPlan.encoded(plan))
        #expect(read == plan)
        #expect(read.changes[0].attributes.last?.after == nil)
    }

    @Test("one plan is the same bytes however its maps were filled: fields and change tags in ascending order")
    func sameBytes() throws {
        func plan(_ names: [String]) -> Plan {
            var fields: [String: PlannedValue] = [:]
            var tags: [String: String] = [:]
            for name in names {
                fields[name] = .value(.string("value of \(name)"))
                tags["record-\(name)"] = "tag-\(name)"
            }
            return Plan(
                recipeName: "maps", storeName: "memory:",
                owner: PlannedUser(handle: "alice", email: nil, recordName: "_a"),
                changes: [
                    PlannedChange(
                        action: .create, kind: .record, address: "record Lists/one", zoneName: "Lists",
                        recordName: "one", attributes: [],
                        record: PlannedRecord(recordType: "Item", parent: nil, fields: fields, operation: .create))
                ],
                basis: LiveBasis(zones: [ZoneBasis(zoneName: "Lists", exists: true, tags: tags)]))
        }
        let names = (0..<40).map { "f\($0)" }
        let forward = try SavedPlan.encoded(plan(names))
        let backward = try SavedPlan.encoded(plan(names.reversed()))
        #expect(forward == backward)
        let text = String(decoding: forward, as: UTF8.self)
        let positions = names.sorted().compactMap { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.count == names.count)
        #expect(positions == positions.sorted(), "the fields in ascending order")
    }

    @Test("a saved plan of 20,000 records holds under 400 bytes a record, and reads back as it was")
    func sizePerRecord() async throws {
        var yaml = [
            "sharelane: 1", "name: sized", "seed: 7", "users:", "  owner: { email: owner@example.com }",
        ]
        yaml += (1...100).map { "  u\($0): { email: u\($0)@example.com }" }
        yaml += ["owner: owner", "zones:"]
        for zone in 1...20 {
            yaml += ["  Z\(zone):", "    share:", "      title: Zone \(zone)", "      participants:"]
            yaml += (0..<10).map {
                "        u\((zone * 10 + $0) % 100 + 1): \($0 % 2 == 0 ? "read-write" : "read-only")"
            }
            yaml += [
                "    records:", "      \"item-{{i:05}}\":", "        repeat: 1000", "        type: Item",
                "        fields: { title: \"Item {{i}}\", note: \"{{fake.sentence}}\", qty: 3, price: 1.5 }",
            ]
        }
        let recipe = try RecipeLoader(environment: [:]).load(yaml: yaml.joined(separator: "\n"), file: "sized.yaml")
        let plan = try await Planner(store: try freshStore(), logger: quietLogger).plan(recipe)
        #expect(plan.summary.add >= 20_000)
        let scratch = try TemporaryDirectory("plan")
        let path = scratch.file("plan.json")
        try SavedPlan.write(plan, to: path)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size / 20_000 < 400, "\(size / 20_000) bytes a record")
        #expect(try SavedPlan.read(from: path) == plan)
    }

    @Test("a saved plan edited after it was written is refused, and the store is left unchanged")
    func editedPlanIsRefused() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        var recipe = SampleRecipes.family()
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        recipe.zones[0].records[0].fields["title"] = .value(.string("Weekly groceries"))
        let scratch = try TemporaryDirectory("plan")
        let path = scratch.file("plan.json")
        try SavedPlan.write(try await planner.plan(recipe), to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("{\"digest\":\"sha256:"))
        #expect(text.contains("Weekly groceries"))
        try text.replacingOccurrences(of: "Weekly groceries", with: "Monthly groceries")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let before = try await snapshot(store)
        #expect {
            _ = try SavedPlan.read(from: path)
        } throws: { error in
            "\(error)".contains("does not match its digest") && "\(error)".contains("nothing was applied")
        }
        #expect(try await snapshot(store) == before)
        // Put back as written, the plan reads and applies.
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let report = try await Applier(store: store, logger: quietLogger).applySaved(try SavedPlan.read(from: path))
        #expect(report.succeeded)
    }

    @Test("a saved plan is refused, naming what changed, and the store is left unchanged")
    func refusedWhenStale() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        var recipe = SampleRecipes.family()
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        recipe.zones[0].records[0].fields["title"] = .value(.string("Weekly groceries"))
        recipe.zones[0].records[1].absent = true
        let saved = try savedAndRead(try await planner.plan(recipe))
        #expect(saved.changes.count == 2)

        // Someone changes a record the plan does not even touch.
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let trips = ZoneID(zoneName: "Trips")
        guard
            case .saved(var hotel)? = try await store.lookupRecords(
                ["hotel"], in: trips, database: .private, as: alice.recordName
            ).first
        else {
            Issue.record("no hotel")
            return
        }
        hotel.fields["amount"] = .double(99)
        _ = try await store.modifyRecords(
            [RecordOperation(.update, hotel)], in: trips, database: .private, atomic: true, as: alice.recordName)

        let before = try await snapshot(store)
        await #expect {
            _ = try await Applier(store: store, logger: quietLogger).applySaved(saved)
        } throws: { error in
            guard case PlannerError.stalePlan(let changes) = error else { return false }
            return changes.count == 1 && changes[0].hasPrefix("record Trips/hotel changed")
                && "\(error)".contains("nothing was applied")
        }
        #expect(try await snapshot(store) == before)
    }

    @Test(
        "a record changed behind the plan's back fails alone; a new plan shows exactly what is left; the next apply converges"
    )
    func partialFailureThenConvergence() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        var recipe = SampleRecipes.family()
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        recipe.zones[0].records[0].fields["title"] = .value(.string("Weekly groceries"))
        recipe.zones[0].records[1].fields["qty"] = .value(.int64(6))
        recipe.zones[1].records[1].fields["currency"] = .value(.string("CHF"))
        let plan = try await planner.plan(recipe)
        #expect(plan.summary.line == "Plan: 0 to add, 3 to change, 0 to destroy.")

        // Between plan and apply, milk changes: its change tag is stale.
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let lists = ZoneID(zoneName: "FamilyLists")
        guard
            case .saved(var milk)? = try await store.lookupRecords(
                ["milk"], in: lists, database: .private, as: alice.recordName
            ).first
        else {
            Issue.record("no milk")
            return
        }
        milk.fields["done"] = .int64(1)
        _ = try await store.modifyRecords(
            [RecordOperation(.update, milk)], in: lists, database: .private, atomic: true, as: alice.recordName)

        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.applied.map(\.address) == ["record FamilyLists/groceries", "record Trips/hotel"])
        #expect(report.failures.map(\.address) == ["record FamilyLists/milk"])
        #expect(report.failures.first?.reason.hasPrefix("CONFLICT") == true)
        #expect(report.line.hasPrefix("Apply failed: 1 of 3 changes failed"))

        let left = try await planner.plan(recipe)
        #expect(left.changes.map(\.address) == ["record FamilyLists/milk"])
        // The recipe owns the fields it declares: the plan also puts `done` back.
        #expect(left.changes.first?.attributes.map(\.name) == ["done", "qty"])
        let second = try await Applier(store: store, logger: quietLogger).apply(left)
        #expect(second.succeeded)
        #expect(try await planner.plan(recipe).changes == [])
    }

    @Test("a refused permission is reported, the rest is applied, and a later apply converges")
    func refusedPermission() async throws {
        let store = try freshStore()
        let planner = Planner(store: store, logger: quietLogger)
        var recipe = SampleRecipes.family()
        _ = try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe))
        // bob wrote a public record of the same name first: only its creator may change it.
        let bob = try await store.signIn(email: "bob@example.com", name: nil)
        _ = try await store.modifyRecords(
            [
                RecordOperation(
                    .create,
                    Record(
                        recordName: "bob-card", recordType: "MyUser", zoneID: .defaultZone,
                        fields: ["firstName": .string("Robert")]))
            ],
            in: .defaultZone, database: .public, atomic: true, as: bob.recordName)
        recipe.publicRecords.append(
            DeclaredRecord(
                name: "bob-card", type: "MyUser", fields: ["firstName": .value(.string("Bob"))],
                location: SampleRecipes.at(31)))
        recipe.zones[0].records[0].fields["title"] = .value(.string("Weekly groceries"))
        let plan = try await planner.plan(recipe)
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.applied.map(\.address) == ["record FamilyLists/groceries"])
        #expect(report.failures.map(\.address) == ["record (public)/bob-card"])
        #expect(report.failures.first?.reason.hasPrefix("ACCESS_DENIED") == true)
        #expect(try await planner.plan(recipe).changes.map(\.address) == ["record (public)/bob-card"])
        // The record's creator hands it over by deleting it; the next apply converges.
        guard
            case .saved(let card)? = try await store.lookupRecords(
                ["bob-card"], in: .defaultZone, database: .public, as: bob.recordName
            ).first
        else {
            Issue.record("no card")
            return
        }
        _ = try await store.modifyRecords(
            [RecordOperation(.delete, card)], in: .defaultZone, database: .public, atomic: true, as: bob.recordName)
        #expect(try await Applier(store: store, logger: quietLogger).apply(try await planner.plan(recipe)).succeeded)
        #expect(try await planner.plan(recipe).changes == [])
    }
}
