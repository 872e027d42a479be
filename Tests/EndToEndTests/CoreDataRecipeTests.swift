import Foundation
import SharelaneTestSupport
import Testing

/// `Recipes/core-data-trips.yaml`, an NSPersistentCloudKitContainer app's records as the container writes them
/// (Docs/CoreData.md), through the built binary: it validates without a warning, applies to a fresh store and
/// plans to nothing afterwards, its lane proves the share, and `init --from-store` reads that store back into a
/// recipe that plans to nothing against it.
@Suite("the Core Data recipe")
struct CoreDataRecipeTests {
    static let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/core-data-trips.yaml").path
    static let shareZone = "com.apple.coredata.cloudkit.share.726E34F7-DB42-4C52-BB75-4B29BA197DB8"

    func run(_ arguments: [String], in folder: URL = BuiltProducts.packageRoot) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: folder, environment: ["NO_COLOR": "1"])
    }

    /// Applies the recipe to a new SQLite store in `scratch` and runs its lane there; returns the store.
    func appliedAndProved(in scratch: TemporaryDirectory) async throws -> String {
        let store = "sqlite:" + scratch.file("store.sqlite")
        let applied = try await run(["apply", Self.recipe, "--yes", "--store", store])
        #expect(applied.status == 0, "\(applied.output)")
        #expect(applied.stdout.contains("  + zone com.apple.coredata.cloudkit.zone\n"), "\(applied.stdout)")
        #expect(applied.stdout.contains("  + share \(Self.shareZone)\n"), "\(applied.stdout)")
        #expect(applied.stdout.contains("  + participant \(Self.shareZone)/bob\n"), "\(applied.stdout)")
        #expect(applied.stdout.contains("Apply complete! Resources: 14 added"), "\(applied.stdout)")

        let lane = try await run(["run", "prove-share", Self.recipe, "--store", store])
        #expect(lane.status == 0, "\(lane.output)")
        #expect(lane.stdout.contains("✔ lane prove-share succeeded"), "\(lane.stdout)")
        #expect(!lane.stdout.contains("✘"), "\(lane.stdout)")
        #expect(lane.stdout.contains("expect carol cannot read \(Self.shareZone)"), "\(lane.stdout)")
        return store
    }

    @Test("it validates without a warning, applies, plans to nothing, and its lane proves the share, twice")
    func appliesAndProvesTheShare() async throws {
        let validated = try await run(["validate", Self.recipe])
        #expect(validated.status == 0, "\(validated.output)")
        #expect(validated.stderr.isEmpty, "no warning: \(validated.stderr)")
        #expect(validated.stdout.contains("OK: recipe `core-data-trips`, 4 users, 2 zones, 9 records, 1 lane"))

        let scratch = try TemporaryDirectory("e2e-core-data")
        let store = try await appliedAndProved(in: scratch)
        let plan = try await run(["plan", Self.recipe, "--detailed-exitcode", "--store", store])
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.hasSuffix("Plan: 0 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")

        // The lane cleans up after itself, so it runs again on the store it left.
        let again = try await run(["run", "prove-share", Self.recipe, "--store", store])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.stdout.contains("already accepted"), "\(again.stdout)")
        let memory = try await run(["run", "prove-share", Self.recipe, "--store", "memory:"])
        #expect(memory.status == 0, "\(memory.output)")
    }

    @Test("init --from-store reads the container's records and the share zone into a recipe that plans to nothing")
    func initFromStorePlansToNothing() async throws {
        let source = try TemporaryDirectory("e2e-core-data-source")
        let store = try await appliedAndProved(in: source)

        let folder = try TemporaryDirectory("e2e-core-data-init")
        let initialized = try await run(
            ["init", "--from-store", store, "--owner", "alice@example.com", "--name", "trips-from-store"],
            in: folder.url)
        #expect(initialized.status == 0, "\(initialized.output)")
        #expect(initialized.stdout.contains("alice@example.com's 2 zones"), "\(initialized.stdout)")
        let recipe = try String(contentsOfFile: folder.file("sharelane.yaml"), encoding: .utf8)
        #expect(recipe.contains("\n  com.apple.coredata.cloudkit.zone:\n"), "\(recipe)")
        #expect(recipe.contains("\n  \(Self.shareZone):\n"), "\(recipe)")
        #expect(recipe.contains("type: CDMR"), "\(recipe)")
        #expect(recipe.contains("CD_trip: CD_Trip_A34BA442-8A88-4BC9-A35C-8A7EBA877637"), "\(recipe)")
        #expect(recipe.contains("CD_title_ckAsset: ASSET"), "the declared asset fields: \(recipe)")
        #expect(recipe.contains("bob: {permission: read-write, accepted: true}"), "\(recipe)")

        let plan = try await run(["plan", "--detailed-exitcode", "--store", store], in: folder.url)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.hasSuffix("Plan: 0 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")
        let check = try await run(["run", "check", "--store", store], in: folder.url)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.stdout.contains("✔ lane check succeeded"), "\(check.stdout)")
    }
}
