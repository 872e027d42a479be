import Foundation
import SharelaneTestSupport
import Testing

/// A lane's long `apply` step says how far it has come, as `sharelane apply` does in a CI log: plain lines
/// through the lane's output, no escape codes, the last with the count reached. The interval is set with
/// `SHARELANE_PROGRESS_INTERVAL` (0: a line after every store call), so the test does not hang on the clock;
/// a short apply at the default interval says nothing.
@Suite("Progress of a lane's apply step")
struct LaneApplyProgressTests {
    static let recipe = """
        sharelane: 1
        name: big
        users:
          ann: { email: ann@example.com }
        owner: ann
        zones:
          Household:
            records:
              "item-{{i:04}}":
                repeat: 3000
                type: Item
                fields: { title: "Item {{i}}" }
        lanes:
          fill:
            steps:
              - apply

        """

    /// The progress lines of a run's output, trimmed.
    static func progressLines(_ output: String) -> [String] {
        output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasSuffix("changes applied") }
    }

    @Test("progress lines under the apply step, without a terminal, ending with the whole count")
    func linesWhileApplying() throws {
        let directory = try TemporaryDirectory("lane-progress")
        _ = try directory.write("big.yaml", Self.recipe)
        let result = try SharelaneBinary.run(
            ["run", "fill", "big.yaml", "--store", "sqlite:" + directory.file("store.sqlite")], in: directory.url,
            environment: ["SHARELANE_PROGRESS_INTERVAL": "0"])
        #expect(result.status == 0, "\(result.output)")
        let lines = Self.progressLines(result.stdout)
        // The zone and its 3000 records.
        #expect(lines.count >= 2, "\(result.stdout)")
        #expect(lines.last == "… 3001 of 3001 changes applied", "\(lines)")
        #expect(lines.allSatisfy { $0.hasPrefix("… ") && $0.hasSuffix(" of 3001 changes applied") }, "\(lines)")
        #expect(!result.output.contains("\u{1B}"), "escape codes in a log")
        // Written while the step runs, before the step's own line.
        let last = try #require(result.stdout.range(of: "… 3001 of 3001 changes applied"))
        let step = try #require(result.stdout.range(of: "✔ apply"))
        #expect(last.upperBound <= step.lowerBound, "\(result.stdout)")
    }

    @Test("a short apply at the default interval says nothing of its progress")
    func shortApplyIsQuiet() throws {
        let directory = try TemporaryDirectory("lane-progress")
        _ = try directory.write("small.yaml", Self.recipe.replacingOccurrences(of: "repeat: 3000", with: "repeat: 3"))
        let result = try SharelaneBinary.run(
            ["run", "fill", "small.yaml", "--store", "sqlite:" + directory.file("store.sqlite")], in: directory.url)
        #expect(result.status == 0, "\(result.output)")
        #expect(Self.progressLines(result.stdout).isEmpty, "\(result.stdout)")
    }

    @Test("sharelane apply without a terminal writes the same plain lines to standard error")
    func commandLineApplyInALog() throws {
        let directory = try TemporaryDirectory("lane-progress")
        _ = try directory.write("big.yaml", Self.recipe)
        let result = try SharelaneBinary.run(
            ["apply", "big.yaml", "--store", "sqlite:" + directory.file("store.sqlite"), "--yes"], in: directory.url,
            environment: ["SHARELANE_PROGRESS_INTERVAL": "0"])
        #expect(result.status == 0, "\(result.output)")
        let lines = Self.progressLines(result.stderr)
        #expect(lines.last == "3001 of 3001 changes applied", "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}"), "escape codes in a log")
    }
}
