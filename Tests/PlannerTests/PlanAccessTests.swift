import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import SharingReport
import Testing

/// What a plan does to who can see what: the access before and after, the markdown for a pull request
/// (Mermaid graph, access cells, diff, always one comment), and deleted records' contents.
@Suite("Plan access and markdown")
struct PlanAccessTests {
    static let first = """
        sharelane: 1
        name: family
        owner: alice
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }
          dana: { email: dana@example.com }
        zones:
          Lists:
            share: { participants: { bob: read-write, carol: read-only } }
            records:
              groceries: { type: TodoList, fields: { title: Groceries } }
              old: { type: Todo, fields: { title: "Old list", qty: 2 } }
          Trips:
            records:
              italy: { type: Group, fields: { name: Italy } }
        """

    /// The same recipe after a pull request: bob drops to read-only, carol leaves, dana joins (not accepted
    /// yet), italy is shared with dana, and `old` is marked absent.
    static let second = """
        sharelane: 1
        name: family
        owner: alice
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }
          dana: { email: dana@example.com }
        zones:
          Lists:
            share:
              participants:
                bob: read-only
                dana: { permission: read-write, accepted: false }
            records:
              groceries: { type: TodoList, fields: { title: Groceries } }
              old: { type: Todo, absent: true }
          Trips:
            records:
              italy:
                type: Group
                fields: { name: Italy }
                share: { participants: { dana: read-only } }
        """

    static func planned(_ text: String, on store: any Store) async throws -> Plan {
        try await Planner(store: store, logger: quietLogger).plan(try PromiseTests.load(text))
    }

    static func applied(_ text: String, on store: any Store) async throws {
        let plan = try await planned(text, on: store)
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [], "\(report.failures.map(\.description))")
    }

    static func describe(_ changes: [AccessMatrix.Change]) -> [String] {
        changes.map { "\($0.user.label) \($0.column): \($0.before?.text ?? "-") → \($0.after?.text ?? "-")" }
    }

    @Test("a plan says which access cells it changes, and the store agrees after apply")
    func accessBeforeAndAfter() async throws {
        let store = try freshStore()
        try await Self.applied(Self.first, on: store)
        let plan = try await Self.planned(Self.second, on: store)
        let access = try #require(plan.access)
        #expect(access.changesSharing)
        #expect(
            Self.describe(access.changes) == [
                "alice Trips/italy: - → owner",
                "bob Lists: write → read",
                "carol Lists: read → none",
                "dana Lists: none → none (pending: write)",
                "dana Trips/italy: - → read",
            ])
        // What the plan promised is what the store has after apply.
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [])
        var users: [SharingUser] = []
        for handle in ["alice", "bob", "carol", "dana"] {
            let user = try #require(try await store.signInExisting(email: "\(handle)@example.com"))
            users.append(SharingUser(recordName: user.recordName, email: user.email, handle: handle))
        }
        let live = try await SharingSnapshotReader(store: store).read(users: users)
        #expect(AccessMatrix.changes(from: AccessMatrix(access.after), to: AccessMatrix(live)).isEmpty)
        // A second plan changes nothing, access included.
        let again = try await Self.planned(Self.second, on: store)
        #expect(again.isEmpty)
        #expect(again.access?.changes.isEmpty == true)
        #expect(again.access?.changesSharing == false)
    }

    @Test("a first plan on an empty store names users it will create and gives them their cells")
    func firstPlanOnAnEmptyStore() async throws {
        let plan = try await Self.planned(Self.first, on: try freshStore())
        let access = try #require(plan.access)
        #expect(
            Self.describe(access.changes) == [
                "alice Lists: - → owner", "bob Lists: - → write", "carol Lists: - → read",
            ])
    }

    @Test("the markdown plan leads with the summary, then the graph and access cells, then the diff")
    func markdownForAPullRequest() async throws {
        let store = try freshStore()
        try await Self.applied(Self.first, on: store)
        let plan = try await Self.planned(Self.second, on: store)
        let markdown = PlanFormat.markdown.render(plan)
        try GoldenFile(besides: #filePath).check(markdown, against: "sharing-change.md")
        let order = ["**Plan:", "```mermaid", "**Access changes**", "| carol | `Lists` | read | none |", "```diff"]
        let positions = order.map { markdown.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "\(markdown)")
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        // A plan that changes no share has no graph.
        let recordsOnly = try await Self.planned(
            Self.first.replacingOccurrences(of: "title: Groceries", with: "title: Food"), on: store)
        #expect(!PlanFormat.markdown.render(recordsOnly).contains("```mermaid"))
    }

    @Test("a deleted record's contents are in the plan: text, markdown and JSON's before")
    func deletedRecordsShowTheirContents() async throws {
        let store = try freshStore()
        try await Self.applied(Self.first, on: store)
        let plan = try await Self.planned(Self.second, on: store)
        let text = PlanFormat.text.render(plan)
        #expect(
            text.contains("  - record Lists/old\n      type:  Todo\n      qty:   2\n      title: \"Old list\"\n"),
            "\(text)")
        let json = try JSONSerialization.jsonObject(with: Data(PlanFormat.json.render(plan).utf8)) as? [String: Any]
        let changes = json?["changes"] as? [[String: Any]] ?? []
        let deleted = try #require(changes.first { $0["address"] as? String == "record Lists/old" })
        let before = deleted["before"] as? [String: Any]
        #expect(before?["type"] as? String == "Todo")
        #expect((before?["fields"] as? [String: Any])?["title"] as? String == "Old list")
        #expect((before?["fields"] as? [String: Any])?["qty"] as? Int == 2)
        #expect(deleted["after"] is NSNull)
    }

    @Test("a 40,000-record plan's markdown fits one GitHub comment and says where the full plan is")
    func largePlanFitsOneComment() async throws {
        let plan = try await Planner(store: try freshStore(), logger: quietLogger).plan(
            SampleRecipes.generated(count: 40_000))
        #expect(plan.changes.count > 40_000)
        let markdown = PlanFormat.markdown.render(plan)
        #expect(markdown.count < 65_536)
        #expect(markdown.contains("**Plan: \(plan.summary.add) to add, 0 to change, 0 to destroy.**"))
        #expect(markdown.contains("more changes are not shown"))
        #expect(markdown.contains("sharelane plan --out plan.json"))
        #expect(markdown.hasSuffix("\n"))
        // The fence is closed and the details block ends: the comment renders.
        #expect(markdown.components(separatedBy: "```diff").count == 2)
        #expect(markdown.contains("```\n\n</details>"))
    }
}
