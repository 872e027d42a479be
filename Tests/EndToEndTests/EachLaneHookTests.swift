import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `before_each` and `after_each` through the built binary: around every lane that runs, the called ones too,
/// with `${lane}` the lane they run around; a failing `before_each` fails its lane before its first step,
/// `after_each` runs after a failure too and its own failure fails the lane; the JUnit report names their
/// steps under the hook and counts the lane's steps a failure skipped; validation checks their steps.
@Suite("before_each and after_each")
struct EachLaneHookTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("each-hooks") }

    /// `one` calls the private `helper`; the hooks echo the lane they run around.
    static let calling = """
        sharelane: 1
        name: each
        users:
          ann: { email: ann@example.com }
          ben: { email: ben@example.com }
        owner: ann
        zones:
          Box:
            share: { participants: { ben: read-write } }
        before_all:
          - reset
          - apply
        before_each:
          - sh: { run: 'echo "before ${lane}"', name: hello }
        after_each:
          - sh: { run: 'echo "after ${lane}"', name: goodbye }
        lanes:
          helper:
            private: true
            steps:
              - expect: { as: ben, can: read, zone: Box }
          one:
            steps:
              - lane: helper
              - expect: { as: ben, can: write, zone: Box }
          two:
            steps:
              - expect: { as: ben, can: read, zone: Box }

        """

    /// `gated`'s before_each fails, `torn`'s after_each fails, `broken`'s own step fails, `good` passes.
    static let failing = """
        sharelane: 1
        name: each
        users:
          ann: { email: ann@example.com }
          ben: { email: ben@example.com }
        owner: ann
        zones:
          Box:
            share: { participants: { ben: read-write } }
        before_all:
          - reset
          - apply
        before_each:
          - sh: { run: 'test "${lane}" != gated', name: gate }
        after_each:
          - sh: { run: 'echo "after ${lane}"', name: goodbye }
          - sh: { run: 'test "${lane}" != torn', name: teardown }
        error:
          - sh: { run: 'echo "error in ${lane}"', name: report }
        lanes:
          good:
            steps:
              - expect: { as: ben, can: read, zone: Box }
          gated:
            steps:
              - expect: { as: ben, can: read, zone: Box }
          torn:
            steps:
              - expect: { as: ben, can: read, zone: Box }
          broken:
            steps:
              - expect: { as: ben, can: read, zone: Box, to_be: false }
              - expect: { as: ben, can: write, zone: Box }

        """

    typealias Report = TestCommandTests.Report
    typealias Case = TestCommandTests.Report.Case

    func test(_ recipe: String, report: String) throws -> SharelaneBinary.Result {
        _ = try directory.write("each.yaml", recipe)
        return try SharelaneBinary.run(
            [
                "test", "each.yaml", "--store", "sqlite:" + directory.file("store.sqlite"), "--report",
                "junit:" + report,
            ],
            in: directory.url)
    }

    /// The lines a step's command printed, trimmed, in order.
    static func printed(_ output: String) -> [String] {
        output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("before ") || $0.hasPrefix("after ") || $0.hasPrefix("error in ") }
    }

    @Test("sharelane test runs before_each and after_each around each lane and each lane it calls, with ${lane}")
    func aroundEveryLane() throws {
        let path = directory.file("each.xml")
        let result = try test(Self.calling, report: path)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            Self.printed(result.stdout) == [
                "before one", "before helper", "after helper", "after one", "before two", "after two",
            ], "\(result.output)")
        let report = try Report(path: path)
        #expect(report.suites.map(\.name) == ["lane one", "lane two"])
        #expect(
            report.suites.first?.cases == [
                Case(name: "one › before_all › reset", outcome: nil),
                Case(name: "one › before_all › apply", outcome: nil),
                Case(name: "one › before_each › hello", outcome: nil),
                Case(name: "one › helper › before_each › hello", outcome: nil),
                Case(name: "one › helper › expect ben can read Box", outcome: nil),
                Case(name: "one › helper › after_each › goodbye", outcome: nil),
                Case(name: "one › expect ben can write Box", outcome: nil),
                Case(name: "one › after_each › goodbye", outcome: nil),
            ], "\(report.names)")
        #expect(
            report.suites.last?.cases.map(\.name) == [
                "two › before_all › reset", "two › before_all › apply", "two › before_each › hello",
                "two › expect ben can read Box", "two › after_each › goodbye",
            ])
    }

    @Test("a failing before_each skips its lane's steps, after_each runs after any failure, and fails a lane itself")
    func failures() throws {
        let path = directory.file("failing.xml")
        let result = try test(Self.failing, report: path)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            Self.printed(result.stdout) == [
                "after good",
                "after gated", "error in gated",
                "after torn", "error in torn",
                "after broken", "error in broken",
            ], "\(result.output)")
        // The lane's failure is the step that failed: the gate, the tear-down, or the lane's own step.
        #expect(result.stdout.contains("✘ lane gated failed at each.yaml:14:5"), "\(result.output)")
        #expect(result.stdout.contains("✘ lane torn failed at each.yaml:17:5"), "\(result.output)")
        #expect(result.stdout.contains("✘ lane broken failed at each.yaml:32:9"), "\(result.output)")
        #expect(result.stdout.contains("✔ lane good succeeded"), "\(result.output)")
        let report = try Report(path: path)
        let suites = Dictionary(uniqueKeysWithValues: report.suites.map { ($0.name, $0.cases) })
        let hooks = ["before_all › reset", "before_all › apply"].map { Case(name: $0, outcome: nil) }
        func cases(_ lane: String, _ list: [(String, String?)]) -> [Case] {
            hooks.map { Case(name: "\(lane) › \($0.name)", outcome: nil) }
                + list.map { Case(name: "\(lane) › \($0.0)", outcome: $0.1) }
        }
        #expect(
            suites["lane gated"]
                == cases(
                    "gated",
                    [
                        ("before_each › gate", "failure"), ("expect ben can read Box", "skipped"),
                        ("after_each › goodbye", nil), ("after_each › teardown", nil), ("error › report", nil),
                    ]), "\(suites["lane gated"] ?? [])")
        #expect(
            suites["lane torn"]
                == cases(
                    "torn",
                    [
                        ("before_each › gate", nil), ("expect ben can read Box", nil), ("after_each › goodbye", nil),
                        ("after_each › teardown", "failure"), ("error › report", nil),
                    ]), "\(suites["lane torn"] ?? [])")
        #expect(
            suites["lane broken"]
                == cases(
                    "broken",
                    [
                        ("before_each › gate", nil), ("expect ben cannot read Box", "failure"),
                        ("expect ben can write Box", "skipped"), ("after_each › goodbye", nil),
                        ("after_each › teardown", nil), ("error › report", nil),
                    ]), "\(suites["lane broken"] ?? [])")
        #expect(report.suites.first { $0.name == "lane good" }?.attributes["failures"] == "0")
    }

    @Test("sharelane run NAME runs the hooks around its lane too")
    func runOneLane() throws {
        _ = try directory.write("each.yaml", Self.calling)
        let result = try SharelaneBinary.run(["run", "two", "each.yaml", "--store", "memory:"], in: directory.url)
        #expect(result.status == 0, "\(result.output)")
        #expect(Self.printed(result.stdout) == ["before two", "after two"], "\(result.output)")
        #expect(result.stdout.contains("▸ before_each two") && result.stdout.contains("▸ after_each two"))
    }

    @Test("validation checks the hooks' steps: an unknown key and an undeclared user at their places")
    func validation() throws {
        let recipe = Self.calling.replacingOccurrences(
            of: "  - sh: { run: 'echo \"after ${lane}\"', name: goodbye }\n",
            with: "  - sh: { run: 'echo \"after ${lane}\"', nmae: goodbye }\n"
        )
        .replacingOccurrences(
            of: "before_each:\n", with: "before_each:\n  - expect: { as: bob, can: read, zone: Box }\n")
        _ = try directory.write("each.yaml", recipe)
        let result = try SharelaneBinary.run(["validate", "each.yaml"], in: directory.url)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains("each.yaml:14:19: error: `as:` `bob` names no user; did you mean `ben`?"),
            "\(result.output)")
        #expect(
            result.output.contains("each.yaml:17:40: error: unknown key `nmae` in `sh`; did you mean `name`?"),
            "\(result.output)")
    }

    @Test("${lane} outside a lane's steps and hooks is an error at its place")
    func laneNameOutsideLanes() throws {
        let recipe = Self.calling.replacingOccurrences(
            of: "    share: { participants: { ben: read-write } }\n",
            with: "    share: { title: \"${lane}\", participants: { ben: read-write } }\n")
        _ = try directory.write("each.yaml", recipe)
        let result = try SharelaneBinary.run(["validate", "each.yaml"], in: directory.url)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains(
                "each.yaml:9:22: error: `${lane}` is the name of the lane running, filled in only in a lane's steps"),
            "\(result.output)")
    }
}
