import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// What `run` and `test` print around and from a tool: the recipe's loading as its own timed line, and an
/// `sh:` step's output as the tool printed it (tabs, colours on a terminal, none elsewhere, none in the
/// JUnit report, which stays well-formed XML).
@Suite("Lane output: recipe loading and a tool's own text", .serialized)
struct ToolOutputCommandTests {
    static let recipe = """
        sharelane: 1
        name: tool-output
        users: { alice: { email: alice@example.com } }
        zones:
          Z:
            records:
              "r-{{i}}": { repeat: 3, type: T, fields: { t: "{{fake.todo}}" } }
        lanes:
          demo:
            ci: true
            steps:
              - apply
              - sh: "printf 'name\\\\tcount\\\\n\\\\033[31mred\\\\033[0m done\\\\a\\\\033]0;title\\\\007 \\\\033[2Jend\\\\n'"
        """

    static let escape = "\u{1B}"

    static func run(_ arguments: [String], in directory: TemporaryDirectory) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: directory.url, environment: ["NO_COLOR": ""])
    }

    @Test("without a terminal a tool's tabs are tabs and its colour codes are gone, never \\u{…} escapes")
    func plainWithoutTerminal() async throws {
        let directory = try TemporaryDirectory("tool-output")
        let recipe = try directory.write("lane.yaml", Self.recipe)
        let result = try await Self.run(["run", "demo", recipe, "--store", "memory:"], in: directory)
        #expect(result.status == 0, "\(result.output)")
        // The tool's lines, indented under its step (the step's own lines quote the command as written).
        let printed = result.stdout.split(separator: "\n").filter { $0.hasPrefix("    ") }
        #expect(printed.contains("    name\tcount"), "\(result.stdout)")
        #expect(printed.contains("    red done end"), "\(result.stdout)")
        #expect(!result.stdout.contains("\\u{"), "\(result.stdout)")
        #expect(!result.stdout.contains(Self.escape), "\(result.stdout)")
    }

    @Test("the JUnit report holds the tool's text without colour codes, and a real XML parser reads it")
    func reportIsWellFormed() async throws {
        let directory = try TemporaryDirectory("tool-output")
        let recipe = try directory.write("lane.yaml", Self.recipe)
        let report = directory.file("report.xml")
        for command in [["run", "demo"], ["test"]] {
            let result = try await Self.run(
                command + [recipe, "--store", "memory:", "--report", "junit:" + report], in: directory)
            #expect(result.status == 0, "\(result.output)")
            let document = try XMLDocument(contentsOf: URL(fileURLWithPath: report), options: [])
            let out = try #require(
                document.rootElement()?.elements(forName: "testsuite").first?.elements(forName: "system-out").first?
                    .stringValue)
            // The tool's lines, below the `--- STEP ---` line that names the step by its command.
            let printed = out.split(separator: "\n").filter { !$0.hasPrefix("--- ") }
            #expect(printed.contains("name\tcount"), "\(out)")
            #expect(printed.contains("red done end"), "\(out)")
        }
    }

    @Test("on a terminal a tool's colours pass through, reset at the line's end, other sequences removed")
    func coloursOnTerminal() async throws {
        let script = URL(fileURLWithPath: "/usr/bin/script")
        try #require(
            FileManager.default.isExecutableFile(atPath: script.path), "script(1) gives the command a terminal")
        let directory = try TemporaryDirectory("tool-output")
        let recipe = try directory.write("lane.yaml", Self.recipe)
        let command = [SharelaneBinary.executable.path, "run", "demo", recipe, "--store", "memory:"]
            .map { "'" + $0 + "'" }.joined(separator: " ")
        let result = try await SharelaneBinary.runProcess(
            script, ["-q", "-e", "-c", command, "/dev/null"], in: directory.url,
            environment: ProcessInfo.processInfo.environment.filter { $0.key != "NO_COLOR" })
        #expect(result.status == 0, "\(result.output)")
        let e = Self.escape
        // A terminal ends lines with CR LF.
        let lines = result.stdout.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
        #expect(lines.contains("    name\tcount"), "\(result.stdout)")
        #expect(lines.contains("    \(e)[31mred\(e)[0m done end\(e)[0m"), "\(result.stdout)")
        #expect(!result.stdout.contains("\\u{"), "\(result.stdout)")
    }

    @Test("run and test time the recipe's loading on a line of its own, before the lane's first step")
    func loadingTimed() async throws {
        let directory = try TemporaryDirectory("tool-output")
        let recipe = try directory.write("lane.yaml", Self.recipe)
        for command in [["run", "demo"], ["test"]] {
            let result = try await Self.run(command + [recipe, "--store", "memory:"], in: directory)
            #expect(result.status == 0, "\(result.output)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let loaded = try #require(
                lines.firstIndex { $0.hasPrefix("✔ recipe \(recipe) loaded  (") && $0.hasSuffix(" ms)") },
                "\(result.stdout)")
            let firstStep = try #require(lines.firstIndex { $0.hasPrefix("✔ apply") }, "\(result.stdout)")
            #expect(loaded < firstStep)
        }
    }
}
