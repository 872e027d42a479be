import Foundation
import SharelaneTestSupport
import Testing

/// Demo data through the built binary: a recipe's own choices and held cities, applied and shown the same on
/// two stores; a malformed pick refused at its column; an export that keeps the recipe's handles.
@Suite("Demo data and exports through the binary")
struct DemoDataCommandTests {
    static let demo = """
        sharelane: 1
        name: lisbon-weekend
        seed: 2026
        users:
          alice: { email: alice.appleseed@example.com, name: Alice Appleseed }
          bob: { email: bob.baker@example.com, name: Bob Baker }
        owner: alice
        zones:
          Weekend:
            records:
              "stop-{{i}}":
                repeat: 12
                type: Stop
                fields:
                  title: "{{fake.city(Lisbon, Sintra, Cascais)}}: {{pick: [breakfast, museum, walk, dinner]}}"
                  where: "{{fake.location(Lisbon, Sintra, Cascais)}}"
              "buy-{{i}}":
                repeat: 8
                type: Item
                fields: { name: "{{fake.shopping}}" }
            share:
              participants:
                bob: { permission: read-write }
        """

    static func run(_ arguments: [String], in directory: TemporaryDirectory) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: directory.url, environment: ["NO_COLOR": "1"])
    }

    /// The `title:` values `show` prints, in order.
    static func titles(_ show: String) -> [String] {
        show.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("title: \"") else { return nil }
            return String(trimmed.dropFirst("title: \"".count).dropLast())
        }
    }

    @Test("a pick and held cities apply as the recipe's own words, the same on two stores")
    func pickAppliesTheSameEverywhere() async throws {
        let directory = try TemporaryDirectory("demo-data")
        let recipe = try directory.write("weekend.yaml", Self.demo)
        var shown: [String] = []
        for store in ["one.sqlite", "two.sqlite"] {
            let url = "sqlite:" + directory.file(store)
            let apply = try await Self.run(["apply", recipe, "--store", url, "--yes"], in: directory)
            #expect(apply.status == 0, "\(apply.output)")
            let show = try await Self.run(["show", "--recipe", recipe, "--store", url], in: directory)
            #expect(show.status == 0, "\(show.output)")
            // The records' lines: the header names the store's file and a share's URL is new in each store.
            shown.append(
                show.stdout.split(separator: "\n").dropFirst().filter { !$0.contains("https://") }
                    .joined(separator: "\n"))
        }
        #expect(shown[0] == shown[1], "the same recipe gives the same data")
        #expect(shown[0].contains("record stop-12 (Stop)"), "\(shown[0])")
        let titles = Self.titles(shown[0])
        #expect(titles.count == 12, "\(shown[0])")
        let cities: Set<String> = ["Lisbon", "Sintra", "Cascais"]
        let activities: Set<String> = ["breakfast", "museum", "walk", "dinner"]
        for title in titles {
            let parts = title.components(separatedBy: ": ")
            #expect(parts.count == 2 && cities.contains(parts[0]) && activities.contains(parts[1]), "\(title)")
        }
        #expect(Set(titles.map { $0.components(separatedBy: ": ")[1] }).count >= 3)
    }

    @Test("a malformed pick fails validation at its line and column and changes nothing")
    func malformedPick() async throws {
        let directory = try TemporaryDirectory("demo-data")
        let broken = Self.demo.replacingOccurrences(
            of: "{{pick: [breakfast, museum, walk, dinner]}}", with: "{{pick: [breakfast, museum, walk, dinner}}")
        let recipe = try directory.write("weekend.yaml", broken)
        let validate = try await Self.run(["validate", recipe], in: directory)
        #expect(validate.status == 1)
        // Line 15; the pick's `{{` is at column 65 of `      title: "{{fake.city(…)}}: {{pick: …`.
        let line = broken.split(separator: "\n", omittingEmptySubsequences: false)[14]
        let column = try #require(line.range(of: "{{pick")).lowerBound.utf16Offset(in: line) + 1
        #expect(
            validate.stderr.contains("weekend.yaml:15:\(column): error: `{{pick: [breakfast, museum, walk, dinner}}`"),
            "\(validate.stderr)")
        #expect(validate.stderr.contains("square brackets"))
        let store = "sqlite:" + directory.file("store.sqlite")
        let apply = try await Self.run(["apply", recipe, "--store", store, "--yes"], in: directory)
        #expect(apply.status == 1)
        #expect(apply.stderr.contains("weekend.yaml:15:\(column): error:"), "\(apply.stderr)")
    }

    @Test("export keeps the recipe's handles by default, and the export plans to no changes")
    func exportKeepsHandles() async throws {
        let directory = try TemporaryDirectory("demo-export")
        let recipe = try directory.write("weekend.yaml", Self.demo)
        let store = "sqlite:" + directory.file("store.sqlite")
        #expect(try await Self.run(["apply", recipe, "--store", store, "--yes"], in: directory).status == 0)

        let exported = directory.file("exported.yaml")
        let export = try await Self.run(
            ["export", "--recipe", recipe, "--store", store, "--out", exported], in: directory)
        #expect(export.status == 0, "\(export.output)")
        let text = try String(contentsOfFile: exported, encoding: .utf8)
        #expect(text.contains("  alice: {email: alice.appleseed@example.com"), "\(text)")
        #expect(text.contains("  bob: {email: bob.baker@example.com"), "\(text)")
        #expect(text.contains("owner: alice\n"), "\(text)")
        #expect(text.contains("        bob: {permission: read-write"), "\(text)")
        #expect(!text.contains("alice-appleseed") && !text.contains("bob-baker"), "\(text)")
        let plan = try await Self.run(["plan", exported, "--store", store, "--detailed-exitcode"], in: directory)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.hasSuffix("Plan: 0 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")

        // A lane written for the recipe runs against the export: its handles still name the same people.
        let lane =
            text + """

                lanes:
                  check:
                    steps:
                      - expect: { as: bob, can: write, zone: Weekend, to_be: true }
                """
        let withLane = try directory.write("exported-lane.yaml", lane)
        let run = try await Self.run(["run", "check", withLane, "--store", store], in: directory)
        #expect(run.status == 0, "\(run.output)")

        // Asked not to, export makes handles from the addresses, as before.
        let made = directory.file("made.yaml")
        let plain = try await Self.run(
            ["export", "--recipe", recipe, "--store", store, "--out", made, "--no-keep-handles"], in: directory)
        #expect(plain.status == 0, "\(plain.output)")
        let madeText = try String(contentsOfFile: made, encoding: .utf8)
        #expect(madeText.contains("alice-appleseed:") && madeText.contains("bob-baker"), "\(madeText)")
        let madePlan = try await Self.run(["plan", made, "--store", store, "--detailed-exitcode"], in: directory)
        #expect(madePlan.status == 0, "\(madePlan.output)")
    }

    @Test("--keep-handles without a recipe says which recipe it needs")
    func keepHandlesNeedsRecipe() async throws {
        let directory = try TemporaryDirectory("demo-export")
        let recipe = try directory.write("weekend.yaml", Self.demo)
        let store = "sqlite:" + directory.file("store.sqlite")
        #expect(try await Self.run(["apply", recipe, "--store", store, "--yes"], in: directory).status == 0)
        let export = try await Self.run(
            ["export", "--owner", "alice.appleseed@example.com", "--store", store, "--keep-handles"], in: directory)
        #expect(export.status != 0)
        #expect(export.stderr.contains("--keep-handles needs the recipe"), "\(export.stderr)")
    }
}
