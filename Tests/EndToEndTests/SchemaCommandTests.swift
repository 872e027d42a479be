import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane schema …`, `sharelane query` and schema-aware plans, run as a user runs them.
@Suite struct SchemaCommandTests {
    static let golden = GoldenFile(besides: #filePath)

    @Test("schema export writes each worked recipe's schema as .ckdb, and diffing it against the recipe shows nothing")
    func everyWorkedRecipeExportsAndRoundTrips() async throws {
        let recipes = try SharelaneBinary.recipes()
        #expect(recipes.count >= 7, "\(recipes)")
        let scratch = try TemporaryDirectory("schema")
        for recipe in recipes {
            let name = URL(fileURLWithPath: recipe).deletingPathExtension().lastPathComponent
            let out = scratch.file("\(name).ckdb")
            let export = try await SharelaneBinary.run(["schema", "export", recipe, "--out", out])
            #expect(export.status == 0, "\(export.output)")
            try Self.golden.check(try String(contentsOfFile: out, encoding: .utf8), against: "\(name).ckdb")
            let diff = try await SharelaneBinary.run(["schema", "diff", out, recipe, "--detailed-exitcode"])
            #expect(diff.status == 0, "\(recipe): \(diff.output)")
            #expect(diff.stdout.contains("No differences"))
        }
    }

    @Test("schema diff exits 0 for the same schema, 2 for different ones with --detailed-exitcode, 1 on error")
    func diffExitCodes() async throws {
        let scratch = try TemporaryDirectory("schema")
        let a = try scratch.write(
            "a.ckdb",
            "DEFINE SCHEMA\n  RECORD TYPE Cost (amount DOUBLE QUERYABLE, vat DOUBLE, GRANT READ TO \"_world\");\n")
        let b = try scratch.write("b.ckdb", "DEFINE SCHEMA\n  RECORD TYPE Cost (amount INT64, note STRING);\n")
        let same = try await SharelaneBinary.run(["schema", "diff", a, a, "--detailed-exitcode"])
        #expect(same.status == 0)
        let different = try await SharelaneBinary.run(["schema", "diff", a, b, "--detailed-exitcode"])
        #expect(different.status == 2, "\(different.output)")
        #expect(different.stdout.contains("~ field Cost.amount DOUBLE → INT64"))
        #expect(different.stdout.contains("- field Cost.vat DOUBLE"))
        #expect(different.stdout.contains("+ field Cost.note STRING"))
        #expect(try await SharelaneBinary.run(["schema", "diff", a, b]).status == 0)
        let bad = try scratch.write("bad.ckdb", "DEFINE SCHEMA\n  RECORD TYPE Cost (\n    amount DUBBLE\n  );\n")
        let broken = try await SharelaneBinary.run(["schema", "diff", a, bad, "--detailed-exitcode"])
        #expect(broken.status == 1)
        #expect(
            broken.stderr.contains("bad.ckdb:3:12: error: unknown field type `DUBBLE`; did you mean `DOUBLE`?"),
            "\(broken.stderr)")
    }

    @Test("a cktool export's system fields and Users type are no differences; a real difference still is")
    func cktoolExportIsNotNoise() async throws {
        let scratch = try TemporaryDirectory("schema")
        // As `xcrun cktool export-schema` writes a container's schema: every system field, the Users type.
        let exported = try scratch.write(
            "exported.ckdb",
            """
            DEFINE SCHEMA

                RECORD TYPE TripDay (
                    "___createTime" TIMESTAMP,
                    "___createdBy"  REFERENCE,
                    "___etag"       STRING,
                    "___modTime"    TIMESTAMP,
                    "___modifiedBy" REFERENCE,
                    "___recordID"   REFERENCE QUERYABLE,
                    title           STRING QUERYABLE SEARCHABLE SORTABLE,
                    GRANT WRITE TO "_creator",
                    GRANT CREATE TO "_icloud",
                    GRANT READ TO "_world"
                );

                RECORD TYPE Users (
                    "___createTime" TIMESTAMP,
                    "___createdBy"  REFERENCE,
                    "___etag"       STRING,
                    "___modTime"    TIMESTAMP,
                    "___modifiedBy" REFERENCE,
                    "___recordID"   REFERENCE,
                    roles           LIST<INT64>,
                    GRANT WRITE TO "_creator",
                    GRANT READ TO "_world"
                );

            """)
        let written = try scratch.write(
            "written.ckdb",
            """
            DEFINE SCHEMA
                RECORD TYPE TripDay ("___recordID" REFERENCE QUERYABLE, title STRING QUERYABLE SEARCHABLE SORTABLE);
            """)
        let same = try await SharelaneBinary.run(["schema", "diff", exported, written, "--detailed-exitcode"])
        #expect(same.status == 0, "\(same.output)")
        #expect(same.stdout.contains("No differences"), "\(same.stdout)")
        let changed = try scratch.write(
            "changed.ckdb", "DEFINE SCHEMA\n    RECORD TYPE TripDay (title STRING QUERYABLE, day INT64);\n")
        let different = try await SharelaneBinary.run(["schema", "diff", exported, changed, "--detailed-exitcode"])
        #expect(different.status == 2, "\(different.output)")
        #expect(different.stdout.contains("+ field TripDay.day INT64"), "\(different.stdout)")
        #expect(
            different.stdout.contains("~ field TripDay.___recordID"), "its index is a difference: \(different.stdout)")
        #expect(!different.stdout.contains("___createTime"), "\(different.stdout)")
        #expect(!different.stdout.contains("Users"), "\(different.stdout)")
        // An environment's name alone points to the live: form.
        let bare = try await SharelaneBinary.run(["schema", "diff", "production", "development"], in: scratch.url)
        #expect(bare.status == 1)
        #expect(
            bare.stderr.contains("the live schema of the store's production environment is live:production"),
            "\(bare.stderr)")
    }

    @Test("a record's field that changes type is refused by the plan before anything is written, at its place")
    func planRefusesATypeConflict() async throws {
        let scratch = try TemporaryDirectory("schema")
        let store = "sqlite:" + scratch.file("store.sqlite")
        let recipe = """
            sharelane: 1
            name: costs
            users: { alice: { email: alice@example.com } }
            zones:
              Trips:
                records:
                  hotel: { type: Cost, fields: { amount: AMOUNT } }
            """
        let path = try scratch.write("costs.yaml", recipe.replacingOccurrences(of: "AMOUNT", with: "420.5"))
        let first = try await SharelaneBinary.run(["plan", path, "--store", store])
        #expect(first.stdout.contains("+ field Cost.amount DOUBLE QUERYABLE SORTABLE"), "\(first.output)")
        #expect(first.stdout.contains("Schema: 1 type, 1 field to add."))
        #expect(try await SharelaneBinary.run(["apply", path, "--store", store, "--yes"]).status == 0)
        let again = try await SharelaneBinary.run(["plan", path, "--store", store, "--detailed-exitcode"])
        #expect(again.status == 0, "\(again.output)")
        _ = try scratch.write("costs.yaml", recipe.replacingOccurrences(of: "AMOUNT", with: "500"))
        let conflict = try await SharelaneBinary.run(["apply", path, "--store", store, "--yes"])
        #expect(conflict.status == 1)
        #expect(
            conflict.stderr.contains("costs.yaml:7:7: field Cost.amount is DOUBLE in the development schema"),
            "\(conflict.output)")
        let show = try await SharelaneBinary.run(["show", "--store", store], in: scratch.url)
        #expect(show.stdout.contains("420.5"), "\(show.output)")
    }

    @Test("query answers as the participant, sorted, and refuses an unindexed field; deploy then production")
    func queryAndDeploy() async throws {
        let scratch = try TemporaryDirectory("schema")
        let store = "sqlite:" + scratch.file("store.sqlite")
        let recipe = "Recipes/fasting.yaml"
        #expect(try await SharelaneBinary.run(["run", "demo", recipe, "--store", store]).status == 0)
        let query = try await SharelaneBinary.run([
            "query", recipe, "--store", store, "--as", "bob", "--zone", "Fasts", "--type", "Fasting",
            "--filter", "endDate GREATER_THAN_OR_EQUALS 2024-05-04T00:00:00Z", "--sort", "endDate:desc",
        ])
        #expect(query.status == 0, "\(query.output)")
        #expect(query.stdout.contains("3 Fasting records in Fasts (bob's shared database, development):"))
        let names = query.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ").first ?? "" }
        #expect(names == ["fast-4", "fast-3", "fast-2"])
        let unindexed = try await SharelaneBinary.run([
            "query", recipe, "--store", store, "--as", "bob", "--zone", "Fasts", "--type", "Fasting",
            "--filter", "goal EQUALS 16h",
        ])
        #expect(unindexed.status == 1)
        #expect(unindexed.stderr.contains("BAD_REQUEST: Field 'goal' is not marked queryable"), "\(unindexed.output)")
        let production = try await SharelaneBinary.run([
            "query", recipe, "--store", store, "--zone", "Fasts", "--type", "Fasting", "--environment", "production",
        ])
        // Production is a world of its own: nothing was applied there, not even alice.
        #expect(production.status == 1)
        #expect(production.stderr.contains("has no account for alice"), "\(production.output)")
        let diff = try await SharelaneBinary.run([
            "schema", "diff", "live:production", "live:development", "--recipe", recipe, "--store", store,
            "--detailed-exitcode",
        ])
        #expect(diff.status == 2, "\(diff.output)")
        #expect(try await SharelaneBinary.run(["schema", "deploy", recipe, "--store", store]).status == 1)
        #expect(try await SharelaneBinary.run(["schema", "deploy", recipe, "--store", store, "--yes"]).status == 0)
        let after = try await SharelaneBinary.run([
            "schema", "diff", "live:production", "live:development", "--recipe", recipe, "--store", store,
            "--detailed-exitcode",
        ])
        #expect(after.status == 0, "\(after.output)")
        let shown = try await SharelaneBinary.run([
            "schema", "show", recipe, "--store", store, "--environment", "production",
        ])
        #expect(shown.stdout.contains("endDate TIMESTAMP QUERYABLE SORTABLE"), "\(shown.output)")
        // The production lane applies the recipe in production, once deployed, and queries there.
        let lane = try await SharelaneBinary.run(["run", "production", recipe, "--store", store])
        #expect(lane.status == 0, "\(lane.output)")
        let deployed = try await SharelaneBinary.run([
            "query", recipe, "--store", store, "--zone", "Fasts", "--type", "Fasting", "--environment", "production",
        ])
        #expect(deployed.status == 0, "\(deployed.output)")
        #expect(deployed.stdout.contains("4 Fasting records in Fasts"), "\(deployed.output)")
    }
}
