import Foundation
import SharelaneTestSupport
import Testing

/// Values a lane hands on, as a user meets them from the command line: what a `sh:` step registers and the
/// share's URL put into every step's text (a saved field, an expectation, a query's filter, an accept by
/// URL), validation refusing a value used before any step registers it, and the public database in `expect`
/// and `query`.
@Suite("Lane values in every step")
struct LaneValuesTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("lane-values") }

    static func recipe(_ steps: String) -> String {
        """
        sharelane: 1
        name: trips
        users:
          ann: { email: ann@example.com }
          carol: { email: carol@example.com }
          mallory: { email: mallory@example.com }
        owner: ann
        schema:
          Trip:
            ___recordID: REFERENCE QUERYABLE
            title: STRING QUERYABLE
            link: STRING QUERYABLE
          Card:
            ___recordID: REFERENCE QUERYABLE
            title: STRING QUERYABLE
        zones:
          Trips:
            records:
              italy:
                type: Trip
                fields: { title: Italy }
                share: { title: Italy, participants: { carol: { permission: read-write, accepted: false } } }
        public:
          records:
            ann-card: { type: Card, fields: { title: "Ann's card" } }
        lanes:
          go:
            steps:
        \(steps)
        """
    }

    private func run(_ steps: String) async throws -> SharelaneBinary.Result {
        let recipe = try directory.write("trips.yaml", Self.recipe(steps))
        return try await SharelaneBinary.run(
            ["run", "go", recipe, "--store", "sqlite:" + directory.file("store.sqlite")], in: directory.url)
    }

    @Test(
        "what a sh: step registers is put into a save and an expect: the saved field holds the value, not ${greeting}")
    func registeredValueInSaveAndExpect() async throws {
        let steps = """
                  - apply
                  - sh: { run: "echo hello-world", register: greeting }
                  - save: { zone: Trips, record: note, type: Trip, fields: { title: "${greeting}" } }
                  - expect: { field: { zone: Trips, record: note, name: title, equals: "${greeting}" } }
                  - expect: { field: { zone: Trips, record: note, name: title, equals: "hello-world" } }
            """
        let passing = try await run(steps)
        #expect(passing.status == 0, "\(passing.output)")
        #expect(passing.stdout.contains("✔ expect ann sees Trips/note.title = \"hello-world\""), "\(passing.output)")
        // Any other text is not what was saved.
        let failing = try await run(
            steps.replacingOccurrences(of: "equals: \"hello-world\"", with: "equals: \"hello\""))
        #expect(failing.status == 1, "\(failing.output)")
        #expect(
            failing.stdout.contains(
                "trips.yaml:33:9: error: expectation failed: expected Trips/note.title as ann sees it = \"hello\", found \"hello-world\""
            ), "\(failing.output)")
    }

    @Test("a query filters on a registered value")
    func queryOnRegisteredValue() async throws {
        let result = try await run(
            """
                  - apply
                  - sh: { run: 'printf "%s" "${share_url:Trips/italy}"', register: trip_url }
                  - save: { zone: Trips, record: link-note, type: Trip, fields: { title: Link, link: "${trip_url}" } }
                  - query:
                      zone: Trips
                      type: Trip
                      filter: [{ field: link, comparator: EQUALS, value: "${trip_url}" }]
                      expect: { names: [link-note] }
            """)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("— 1 record: link-note"), "\(result.output)")
    }

    @Test("accept: { as, url } accepts the share behind a registered URL, as a person opening the link")
    func acceptByURL() async throws {
        let result = try await run(
            """
                  - apply
                  - sh: { run: 'printf "%s" "${share_url:Trips/italy}"', register: trip_url }
                  - expect: { as: carol, can: read, zone: Trips, record: italy, to_be: false }
                  - accept: { as: carol, url: "${trip_url}" }
                  - expect: { as: carol, can: read, zone: Trips, record: italy }
                  - accept: { as: carol, url: "${share_url:Trips/italy}" }
                  - accept: { as: mallory, url: "${trip_url}", expect_error: ACCESS_DENIED }
            """)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains(
                "✔ accept ${trip_url} as carol — Trips/italy: read-write in carol's shared database"),
            "\(result.output)")
        #expect(result.stdout.contains("— Trips/italy: already accepted"), "\(result.output)")
    }

    @Test("expect reads public records and query asks the public database without a zone")
    func publicDatabase() async throws {
        let result = try await run(
            """
                  - apply
                  - expect: { as: mallory, database: public, field: { record: ann-card, name: title, equals: "Ann's card" } }
                  - expect: { as: mallory, database: public, can: read, record: ann-card }
                  - query: { as: mallory, database: public, type: Card, expect: { names: [ann-card] } }
            """)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("✔ expect mallory sees public ann-card.title = \"Ann's card\""), "\(result.output)")
        #expect(result.stdout.contains("— 1 record: ann-card"), "\(result.output)")
    }

    @Test("validate refuses a value used before any step registers it, at its line and column, and a misspelt handle")
    func validateRefusesEarlyValues() async throws {
        let recipe = try directory.write(
            "trips.yaml",
            Self.recipe(
                """
                      - save: { zone: Trips, record: note, type: Trip, fields: { title: "${greeting}" } }
                      - sh: { run: "echo hello-world", register: greeting }
                      - sh: "echo ${record_name:carl}"
                      - accept: { as: carol, url: "${share_url:Trip}" }
                      - accept: { as: carol, url: "${share_url:${zone}}" }
                """))
        let result = try await SharelaneBinary.run(["validate", recipe], in: directory.url)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains(
                "trips.yaml:29:74: error: `${greeting}` has no value here: no step before this one registers `greeting`; move the step with `register: greeting` before it (or into `before_all`)"
            ), "\(result.output)")
        #expect(
            result.stderr.contains(
                "trips.yaml:31:19: error: `${record_name:carl}` names no user of the recipe; did you mean `carol`?"),
            "\(result.output)")
        // A share's zone is read as written when the step runs: a misspelt or nested one is said now.
        #expect(
            result.stderr.contains("`${share_url:Trip}` names no zone of the recipe; did you mean `Trips`?"),
            "\(result.output)")
        #expect(
            result.stderr.contains("a `${…}` inside `${share_url:…}` is not filled in; write the zone's name"),
            "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite")))
    }

    @Test("a lane's value written outside the lanes is refused, where it was silently kept as text")
    func valueOutsideLanes() async throws {
        let recipe = try directory.write(
            "trips.yaml",
            Self.recipe("      - sh: { run: \"echo hi\", register: greeting }")
                .replacingOccurrences(of: "fields: { title: Italy }", with: "fields: { title: \"${greeting}\" }"))
        let result = try await SharelaneBinary.run(["validate", recipe], in: directory.url)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains(
                "trips.yaml:21:27: error: `${greeting}` is what a lane step registers (`register: greeting`), which only later steps of a lane can use"
            ), "\(result.output)")
    }
}
