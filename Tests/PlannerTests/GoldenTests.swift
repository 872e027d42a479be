import CustomDump
import Foundation
import PlanModel
import Planner
import ShareKit
import SharelaneTestSupport
import Testing

/// The three renderings of a plan that has every kind of change, compared as text with the files in
/// `Golden/`. Re-record with `RECORD_GOLDEN=1 swift test --filter GoldenTests`.
@Suite("Golden renderings")
struct GoldenTests {
    static let everyKind: Plan = {
        func text(_ s: String) -> PlannedValue { .text(s) }
        func value(_ v: FieldValue) -> PlannedValue { .value(v) }
        let familyShare = PlannedShare(
            recordName: "cloudkit.zoneshare", zoneName: "FamilyLists", rootRecordName: nil, title: "Family lists",
            publicPermission: .none, participants: [], url: "https://share.example/FamilyLists",
            baseChangeTag: "t7")
        let changes: [PlannedChange] = [
            PlannedChange(action: .create, kind: .zone, address: "zone Trips", zoneName: "Trips"),
            PlannedChange(
                action: .create, kind: .record, address: "record Trips/italy", zoneName: "Trips", recordName: "italy",
                attributes: [
                    AttributeChange(name: "type", isField: false, before: nil, after: text("Group")),
                    AttributeChange(
                        name: "members", isField: true, before: nil,
                        after: value(.list(elementType: .string, [.string("alice"), .string("bob")]))),
                    AttributeChange(name: "name", isField: true, before: nil, after: value(.string("Italy 2025"))),
                ]),
            PlannedChange(
                action: .create, kind: .record, address: "record Trips/hotel", zoneName: "Trips", recordName: "hotel",
                attributes: [
                    AttributeChange(name: "type", isField: false, before: nil, after: text("Cost")),
                    AttributeChange(name: "parent", isField: false, before: nil, after: text("italy")),
                    AttributeChange(name: "amount", isField: true, before: nil, after: value(.double(420.5))),
                    AttributeChange(
                        name: "trip", isField: true, before: nil,
                        after: value(.reference(Reference(recordName: "italy")))),
                ]),
            PlannedChange(
                action: .update, kind: .record, address: "record FamilyLists/milk", zoneName: "FamilyLists",
                recordName: "milk",
                attributes: [
                    AttributeChange(name: "qty", isField: true, before: value(.int64(2)), after: value(.int64(3))),
                    AttributeChange(name: "done", isField: true, before: nil, after: value(.int64(1))),
                    AttributeChange(
                        name: "due", isField: true, before: nil, after: value(.timestamp(1_714_554_000_000))),
                    AttributeChange(name: "note", isField: true, before: value(.string("semi-skimmed")), after: nil),
                ], baseChangeTag: "t3"),
            PlannedChange(
                action: .create, kind: .share, address: "share Trips/italy", zoneName: "Trips", recordName: "italy",
                attributes: [
                    AttributeChange(name: "public_permission", isField: false, before: nil, after: text("read-only"))
                ]),
            PlannedChange(
                action: .update, kind: .share, address: "share FamilyLists", zoneName: "FamilyLists",
                attributes: [
                    AttributeChange(
                        name: "title", isField: false, before: value(.string("Lists")),
                        after: value(.string("Family lists")))
                ], share: familyShare, baseChangeTag: "t7"),
            PlannedChange(
                action: .create, kind: .participant, address: "participant FamilyLists/carol", zoneName: "FamilyLists",
                attributes: [
                    AttributeChange(name: "permission", isField: false, before: nil, after: text("read-only")),
                    AttributeChange(name: "role", isField: false, before: nil, after: text("private-user")),
                    AttributeChange(name: "accepted", isField: false, before: nil, after: text("true")),
                ], share: familyShare, baseChangeTag: "t7"),
            PlannedChange(
                action: .update, kind: .participant, address: "participant FamilyLists/bob", zoneName: "FamilyLists",
                attributes: [
                    AttributeChange(
                        name: "permission", isField: false, before: text("read-only"), after: text("read-write"))
                ], share: familyShare, baseChangeTag: "t7"),
            PlannedChange(
                action: .update, kind: .participant, address: "participant FamilyLists/dana", zoneName: "FamilyLists",
                attributes: [
                    AttributeChange(name: "accepted", isField: false, before: text("false"), after: text("true"))
                ],
                share: familyShare, baseChangeTag: "t7"),
            PlannedChange(
                action: .create, kind: .record, address: "record (public)/alice-card", database: .public,
                zoneName: "_defaultZone", recordName: "alice-card",
                attributes: [
                    AttributeChange(name: "type", isField: false, before: nil, after: text("MyUser")),
                    AttributeChange(name: "firstName", isField: true, before: nil, after: value(.string("Alice"))),
                    AttributeChange(
                        name: "tripShareURL", isField: true, before: nil,
                        after: .shareURL(zone: "Trips", record: "italy")),
                ]),
            PlannedChange(
                action: .delete, kind: .participant, address: "participant FamilyLists/erin", zoneName: "FamilyLists",
                attributes: [
                    AttributeChange(name: "permission", isField: false, before: text("read-write"), after: nil)
                ],
                share: familyShare, baseChangeTag: "t7"),
            PlannedChange(
                action: .delete, kind: .share, address: "share Archive/2019", zoneName: "Archive", recordName: "2019",
                baseChangeTag: "t9"),
            PlannedChange(
                action: .delete, kind: .record, address: "record FamilyLists/eggs", zoneName: "FamilyLists",
                recordName: "eggs", baseChangeTag: "t4"),
            PlannedChange(
                action: .delete, kind: .zone, address: "zone Scratch", zoneName: "Scratch",
                attributes: [AttributeChange(name: "records", isField: false, before: text("12"), after: nil)],
                deletedRecordCount: 12),
        ]
        var plan = Plan(
            recipeName: "family-lists", storeName: "memory:",
            owner: PlannedUser(handle: "alice", email: "alice@example.com", recordName: "_alice"),
            changes: changes,
            notes: ["3 undeclared records kept in Archive: draft, notes and old-list; --prune deletes them."],
            waiting: ["participant Trips/italy/frank: waiting for frank to accept (the store cannot act as frank)"],
            basis: LiveBasis())
        plan.container = "iCloud.com.example.Lists"
        plan.environment = .development
        return plan
    }()

    static let noChanges = {
        var plan = Plan(
            recipeName: "family-lists", storeName: "memory:",
            owner: PlannedUser(handle: "alice", email: "alice@example.com", recordName: "_alice"), changes: [],
            basis: LiveBasis())
        plan.container = "iCloud.com.example.Lists"
        plan.environment = .development
        return plan
    }()

    static let plans = ["every-kind": everyKind, "no-changes": noChanges]

    @Test("text", arguments: ["every-kind", "no-changes"])
    func text(name: String) throws {
        try assertGolden(PlanFormat.text.render(Self.plans[name] ?? Self.noChanges), "\(name).txt")
    }

    @Test("markdown", arguments: ["every-kind", "no-changes"])
    func markdown(name: String) throws {
        try assertGolden(PlanFormat.markdown.render(Self.plans[name] ?? Self.noChanges), "\(name).md")
    }

    @Test("json", arguments: ["every-kind", "no-changes"])
    func json(name: String) throws {
        try assertGolden(PlanFormat.json.render(Self.plans[name] ?? Self.noChanges), "\(name).json")
    }

    @Test("the summary line is exact, and JSON's summary agrees with it")
    func summaryLine() throws {
        #expect(Self.everyKind.summary.line == "Plan: 6 to add, 4 to change, 4 to destroy.")
        let json =
            try JSONSerialization.jsonObject(with: Data(PlanFormat.json.render(Self.everyKind).utf8)) as? [String: Any]
        let summary = json?["summary"] as? [String: Int]
        #expect(summary == ["add": 6, "change": 4, "destroy": 4])
        #expect(json?["format_version"] as? Int == 1)
        #expect((json?["changes"] as? [Any])?.count == 14)
    }

    @Test("colour only when asked: ANSI escapes with colors, none without")
    func colours() {
        #expect(!PlanFormat.text.render(Self.everyKind, style: .plain).contains("\u{1B}["))
    }

    @Test("a plan survives the saved-plan file unchanged")
    func savedPlanRoundTrip() throws {
        let scratch = try TemporaryDirectory("plan")
        let path = scratch.file("plan.json")
        try SavedPlan.write(Self.everyKind, to: path)
        #expect(SavedPlan.isSavedPlan(at: path))
        expectNoDifference(try SavedPlan.read(from: path), Self.everyKind)
    }
}

/// Compares `actual` with `Golden/NAME` as text, with a diff on failure; `RECORD_GOLDEN=1` re-records it.
func assertGolden(_ actual: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try GoldenFile(besides: #filePath).check(actual, against: name, sourceLocation: sourceLocation)
}
