import Applier
import Foundation
import Planner
import Recipe
import ShareKit
import Testing

/// Users are looked up and signed in in batches, as records are written: a recipe of many users costs the
/// store no more calls than one of a few (Docs/Performance.md has the times).
@Suite("Users at scale")
struct UsersAtScaleTests {
    /// `alice` and `count` users more, one zone of one record shared with the first two of them.
    static func recipe(users count: Int) -> Recipe {
        let at = SampleRecipes.at
        let users =
            [DeclaredUser(handle: "alice", email: "alice@example.com", location: at(1))]
            + (1...count).map { DeclaredUser(handle: "u\($0)", email: "u\($0)@example.com", location: at(2)) }
        let share = DeclaredShare(
            title: "Z", publicPermission: .none,
            participants: [
                DeclaredParticipant(handle: "u1", permission: .readWrite, location: at(4)),
                DeclaredParticipant(handle: "u2", permission: .readOnly, location: at(5)),
            ], location: at(3))
        let zone = DeclaredZone(
            name: "Z", share: .share(share),
            records: [DeclaredRecord(name: "r", type: "Item", fields: ["qty": .value(.int64(3))], location: at(6))],
            location: at(3))
        return Recipe(name: "users", file: "users.yaml", users: users, owner: "alice", zones: [zone])
    }

    @Test("a plan, its apply and the no-op plan after it make the same store calls for 10 users and for 1,000")
    func storeCallsDoNotGrowWithUsers() async throws {
        var calls: [[[String: Int]]] = []
        for size in [10, 1000] {
            let recipe = Self.recipe(users: size)
            let counting = CountingStore(try freshStore())
            let planner = Planner(store: counting, logger: quietLogger)
            let plan = try await planner.plan(recipe)
            #expect(plan.users.count == size + 1 && plan.users.allSatisfy(\.isNew))
            let planCalls = counting.calls
            counting.resetCounts()
            let report = try await Applier(store: counting, logger: quietLogger).apply(plan)
            #expect(report.succeeded, "\(report.failures)")
            let applyCalls = counting.calls
            counting.resetCounts()
            let again = try await planner.plan(recipe)
            #expect(again.changes == [])
            // Every user is in the store now, under the record name the plan after the apply knows.
            #expect(again.users.allSatisfy { !$0.isNew })
            let found = try await counting.base.signInExisting(recipe.users.map(\.email))
            #expect(
                zip(found, again.users).allSatisfy { (try? $0.get())??.recordName == $1.recordName }
                    && found.count == size + 1)
            calls.append([planCalls, applyCalls, counting.calls])
        }
        #expect(calls[0] == calls[1])
    }
}
