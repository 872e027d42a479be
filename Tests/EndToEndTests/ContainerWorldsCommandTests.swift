import Foundation
import GRDB
import SharelaneTestSupport
import Testing

/// One store file keeps each container and environment apart, as a user of the command line meets it: a
/// recipe of another container plans everything to add, and a file written before the worlds were kept
/// apart keeps its data for the container that opens it first, saying so.
@Suite final class ContainerWorldsCommandTests {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    var store: String { "sqlite:" + scratch.file("store.sqlite") }

    init() throws {
        scratch = try TemporaryDirectory("e2e-worlds")
    }

    func recipe(container: String, environment: String = "development") throws -> String {
        try scratch.write(
            "\(container)-\(environment).yaml",
            """
            sharelane: 1
            name: trips
            container: \(container)
            environment: \(environment)
            users: { alice: { email: alice@example.com } }
            zones:
              Trips:
                records: { italy: { type: Trip, fields: { title: Italy } } }
            """)
    }

    @Test func aRecipeOfAnotherContainerOnTheSameFileHasEverythingToAdd() async throws {
        let a = try recipe(container: "iCloud.com.example.A")
        let applied = try await SharelaneBinary.run(["apply", a, "--store", store, "--yes"], in: directory)
        #expect(applied.status == 0, "\(applied.output)")
        #expect(applied.stdout.contains("Apply complete! Resources: 2 added"))

        let b = try recipe(container: "iCloud.com.example.B")
        let other = try await SharelaneBinary.run(["plan", b, "--store", store], in: directory)
        #expect(other.status == 0, "\(other.output)")
        #expect(other.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "\(other.stdout)")
        let production = try recipe(container: "iCloud.com.example.A", environment: "production")
        // Production has its own schema, which no deploy has filled: the plan says so, and plans nothing.
        let prod = try await SharelaneBinary.run(["plan", production, "--store", store], in: directory)
        #expect(prod.status == 1)
        #expect(prod.stderr.contains("the production schema of \(store) lacks what the recipe needs"), "\(prod.output)")
        let again = try await SharelaneBinary.run(["plan", a, "--store", store], in: directory)
        #expect(again.stdout.contains("No changes"), "\(again.output)")
    }

    @Test func aFileWrittenBeforeContainersWereApartStaysWithTheFirstToOpenIt() async throws {
        let a = try recipe(container: "iCloud.com.example.A")
        let applied = try await SharelaneBinary.run(["apply", a, "--store", store, "--yes"], in: directory)
        #expect(applied.status == 0, "\(applied.output)")
        // As such a file is: its data, and no container recorded.
        let file = try DatabaseQueue(path: scratch.file("store.sqlite"))
        try await file.write { try $0.execute(sql: "DELETE FROM storeWorld") }
        try file.close()

        let first = try await SharelaneBinary.run(["plan", a, "--store", store], in: directory)
        #expect(first.stdout.contains("No changes"), "\(first.output)")
        #expect(
            first.stderr.contains(
                "was written before containers and environments were kept apart: its data is now "
                    + "iCloud.com.example.A/development"), "\(first.stderr)")
        let second = try await SharelaneBinary.run(["plan", a, "--store", store], in: directory)
        #expect(!second.stderr.contains("kept apart"), "said once: \(second.stderr)")
    }
}
