import Foundation
import SharelaneTestSupport
import Testing

/// Mistakes a QA lead makes in a lane, through the binary: each is refused where it is written, before
/// anything runs, instead of turning a check into one that cannot fail.
@Suite("Lane mistakes")
struct LaneMistakeTests {
    /// A household list shared read-only with Eve, a permission lane, a scripted lane with a ticket parameter,
    /// and a private helper. `CHECK` is replaced by each test's own step.
    static let recipe = """
        sharelane: 1
        name: household
        vars:
          ticket: QA-000
        users:
          alice: { email: alice@example.com }
          eve: { email: eve@example.com }
          b: { email: b@example.com }
          c: { email: c@example.com }
        owner: alice
        zones:
          Household:
            share:
              participants:
                eve: read-only
                b: read-write
                "${viewer:-c}": read-only
            records:
              milk: { type: Item, fields: { title: Milk } }
        lanes:
          matrix:
            steps:
              - apply
              - accept: { as: eve, zone: Household }
              - CHECK
          scripted:
            steps:
              - sh: "echo ticket ${ticket}"
              - lane: { name: archive, parameters: { archive_count: 3 } }
          archive:
            private: true
            steps:
              - sh: "echo archiving ${archive_count:-10}"
        """

    /// The line of `- CHECK` in `recipe`.
    static let checkLine = 25

    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("lane-mistakes") }

    private func write(check: String = "expect: { as: eve, can: read, zone: Household }", _ edit: String = "")
        throws -> (recipe: String, store: String)
    {
        var text = Self.recipe.replacingOccurrences(of: "CHECK", with: check)
        if !edit.isEmpty { text = text.replacingOccurrences(of: "archive_count: 3", with: edit) }
        return (try directory.write("household.yaml", text), "sqlite:" + directory.file("store.sqlite"))
    }

    @Test(
        "a negative check on a mistyped zone is refused by validate and run, at the zone's name, with the nearest zone")
    func negativeCheckOnMistypedZone() async throws {
        let (recipe, store) = try write(check: "expect: { as: eve, can: read, zone: Houshold, to_be: false }")
        let message =
            "\(recipe):\(Self.checkLine):45: error: zone `Houshold` is not declared in the recipe; did you mean `Household`?"
        let validated = try await SharelaneBinary.run(["validate", recipe])
        #expect(validated.status == 1, "\(validated.output)")
        #expect(validated.stderr.contains(message), "\(validated.output)")
        #expect(validated.stderr.contains("`undeclared: true`"), "\(validated.output)")
        let ran = try await SharelaneBinary.run(["run", "matrix", recipe, "--store", store])
        #expect(ran.status == 1, "\(ran.output)")
        #expect(ran.stderr.contains(message), "\(ran.output)")
        #expect(!ran.stdout.contains("▸ lane"), "nothing runs: \(ran.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite")), "nothing is applied")
    }

    @Test(
        "an `undeclared: true` zone is taken by validate; a negative check on it fails while the store holds no such zone"
    )
    func negativeCheckOnMissingZoneFails() async throws {
        let (recipe, store) = try write(
            check: "expect: { as: eve, can: write, zone: Pantry, to_be: false, undeclared: true }")
        let validated = try await SharelaneBinary.run(["validate", recipe])
        #expect(validated.status == 0, "\(validated.output)")
        #expect(!validated.stderr.contains("warning"), "\(validated.output)")
        let ran = try await SharelaneBinary.run(["run", "matrix", recipe, "--store", store])
        #expect(ran.status == 1, "\(ran.output)")
        #expect(
            ran.stdout.contains(
                "\(recipe):\(Self.checkLine):9: error: expectation failed: expected eve write zone Pantry: refused"),
            "\(ran.output)")
        #expect(ran.stdout.contains("found no zone Pantry in its owner's private database"), "\(ran.output)")
    }

    @Test("a negative check on a zone the store holds still passes")
    func negativeCheckOnDeclaredZonePasses() async throws {
        let (recipe, store) = try write(check: "expect: { as: eve, can: write, zone: Household, to_be: false }")
        let ran = try await SharelaneBinary.run(["run", "matrix", recipe, "--store", store])
        #expect(ran.status == 0, "\(ran.output)")
        #expect(ran.stdout.contains("✔ lane matrix succeeded"), "\(ran.output)")
    }

    @Test("a mistyped lane parameter or --var is refused with the nearest name, and nothing runs")
    func mistypedParameter() async throws {
        let (recipe, store) = try write()
        let ran = try await SharelaneBinary.run(["run", "scripted", recipe, "tikcet=QA-123", "--store", store])
        #expect(ran.status == 1, "\(ran.output)")
        #expect(
            ran.stderr.contains(
                "error: variable `tikcet` is given a value, but the recipe neither declares it under `vars:` nor uses it as `${tikcet}`; did you mean `ticket`?"
            ), "\(ran.output)")
        #expect(!ran.stdout.contains("ticket QA-000"), "the lane did not run with the default: \(ran.output)")
        let validated = try await SharelaneBinary.run(["validate", recipe, "--var", "tikcet=1"])
        #expect(validated.status == 1, "\(validated.output)")
        #expect(validated.stderr.contains("did you mean `ticket`?"), "\(validated.output)")
        let right = try await SharelaneBinary.run(["run", "scripted", recipe, "ticket=QA-123", "--store", store])
        #expect(right.status == 0, "\(right.output)")
        #expect(right.stdout.contains("ticket QA-123"), "\(right.output)")
        #expect(right.stdout.contains("archiving 3"), "\(right.output)")
    }

    @Test("a --var-file may hold other recipes' variables: a name this recipe does not read is a warning, not an error")
    func variableFileWithOtherNames() async throws {
        let (recipe, store) = try write()
        let file = try directory.write("staging.yaml", "ticket: QA-7\nregion: eu\n")
        let ran = try await SharelaneBinary.run(["run", "scripted", recipe, "--var-file", file, "--store", store])
        #expect(ran.status == 0, "\(ran.output)")
        #expect(ran.stdout.contains("ticket QA-7"), "\(ran.output)")
        #expect(
            ran.stderr.contains(
                "\(recipe): warning: variable `region` is given a value, but the recipe neither declares it under `vars:` "
                    + "nor uses it as `${region}` (set by a --var-file; ignored)"), "\(ran.output)")
        let named = try await SharelaneBinary.run(["validate", recipe, "--var-file", file, "--var", "region=us"])
        #expect(named.status == 1, "--var names it itself: \(named.output)")
    }

    @Test("a mistyped registered value is pointed at where it is written, with the name the lane registered")
    func mistypedLaneValue() async throws {
        let (recipe, _) = try write(check: "sh: { run: \"echo ${share_url:Household}\", register: link }")
        let text = try String(contentsOfFile: recipe, encoding: .utf8)
            .replacingOccurrences(of: "echo ticket ${ticket}", with: "echo ticket ${ticket} ${lnik}")
        try text.write(toFile: recipe, atomically: true, encoding: .utf8)
        let validated = try await SharelaneBinary.run(["validate", recipe])
        #expect(validated.status == 1, "\(validated.output)")
        // `      - sh: "echo ticket ${ticket} ` is 35 characters: `${lnik}` starts at column 36.
        #expect(
            validated.stderr.contains("\(recipe):28:36: error: unknown variable `lnik`; did you mean `link`?"),
            "\(validated.output)")
    }

    @Test("a `lane:` step's mistyped parameter is refused at its key")
    func mistypedLaneStepParameter() async throws {
        let (recipe, _) = try write(check: "apply", "archive_cnt: 3")
        let validated = try await SharelaneBinary.run(["validate", recipe])
        #expect(validated.status == 1, "\(validated.output)")
        #expect(
            validated.stderr.contains(
                "\(recipe):29:46: error: parameter `archive_cnt` names no variable of the recipe; did you mean `archive_count`?"
            ), "\(validated.output)")
    }

    @Test("a variable that makes two participant entries one person is refused at the second entry")
    func participantTwiceAfterVariables() async throws {
        let (recipe, _) = try write()
        #expect(try await SharelaneBinary.run(["validate", recipe]).status == 0)
        let validated = try await SharelaneBinary.run(["validate", recipe, "--var", "viewer=b"])
        #expect(validated.status == 1, "\(validated.output)")
        #expect(
            validated.stderr.contains(
                "\(recipe):17:9: error: `b` is a participant of this share twice (also at line 16)"),
            "\(validated.output)")
    }

    @Test("`within: 2s` tries for the whole 2 s and says how many tries over how long")
    func withinHonoursItsWholeTime() async throws {
        let (recipe, store) = try write(check: "expect: { as: eve, records: 5, zone: Household, within: 2s }")
        let ran = try await SharelaneBinary.run(["run", "matrix", recipe, "--store", store])
        #expect(ran.status == 1, "\(ran.output)")
        let failed = try #require(ran.stdout.split(separator: "\n").first { $0.contains("✘ expect") }, "\(ran.output)")
        let milliseconds = try #require(
            Int(failed.split(separator: "(").last?.split(separator: " ").first ?? ""), "\(failed)")
        #expect(milliseconds >= 2000, "\(failed)")
        let tries = try #require(ran.stdout.firstMatch(of: /; tried (\d+) times over (\d+\.\d) s \(within: 2s\)/))
        #expect(Int(tries.1) ?? 0 >= 5, "\(ran.output)")
        #expect(Double(tries.2) ?? 0 >= 2.0, "\(ran.output)")
    }

    @Test("the unknown-lane error lists only the lanes the command line runs")
    func unknownLaneListsPublicLanes() async throws {
        let (recipe, store) = try write()
        let ran = try await SharelaneBinary.run(["run", "archiv", recipe, "--store", store])
        #expect(ran.status == 1, "\(ran.output)")
        #expect(ran.stderr.contains("no lane named 'archiv'"), "\(ran.output)")
        #expect(ran.stderr.contains("its lanes are: matrix, scripted"), "\(ran.output)")
        #expect(!ran.stderr.contains("archive"), "\(ran.output)")
    }

    @Test("a mistyped key in a record says `did you mean type`, once")
    func mistypedRecordKey() async throws {
        let path = try directory.write(
            "trips.yaml",
            """
            sharelane: 1
            name: trips
            users: { alice: { email: alice@example.com } }
            zones:
              Trips:
                records:
                  r1: { typ: Stop }
            """)
        let validated = try await SharelaneBinary.run(["validate", path])
        #expect(validated.status == 1, "\(validated.output)")
        #expect(
            validated.stderr.contains("\(path):7:13: error: unknown key `typ` in record `r1`; did you mean `type`?"),
            "\(validated.output)")
        #expect(validated.stderr.contains("1 error found"), "\(validated.output)")
    }
}
