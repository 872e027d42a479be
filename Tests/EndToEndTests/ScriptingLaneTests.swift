import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Lanes that script, as a user meets them on the command line: `sh:` steps and outside actions, values
/// handed from step to step, reports for CI, and `within:` against an index that lags.
@Suite("Lanes that script")
struct ScriptingLaneTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("scripting") }

    static func recipe(_ steps: String, extraUsers: String = "") -> String {
        """
        sharelane: 1
        name: scripting
        vars:
          greeting: hello
        users:
          ann: { email: ann@example.com }
          ben: { email: ben@example.com }\(extraUsers)
        owner: ann
        zones:
          Box:
            share: { participants: { ben: read-write } }
            records:
              item: { type: Thing, fields: { title: Item } }
        lanes:
          go:
            steps:
        \(steps)
        """
    }

    private func run(_ steps: String, _ arguments: [String] = [], environment: [String: String] = [:]) async throws
        -> SharelaneBinary.Result
    {
        let recipe = try directory.write("scripting.yaml", Self.recipe(steps))
        return try await SharelaneBinary.run(
            ["run", "go", recipe, "--store", "sqlite:" + directory.file("store.sqlite")] + arguments,
            in: directory.url, environment: environment)
    }

    @Test("a shell command runs with the lane's environment, its output under its line, and passes values on")
    func shellStepsHandValuesOn() async throws {
        let result = try await run(
            """
                  - apply
                  - sh: { run: 'printf "%s" "${share_url:Box}"', register: link }
                  - sh: { run: [printf, "%s|%s", "${record_name:ben}", "${link}"], register: both }
                  - sh: 'echo "$SHARELANE_LANE $SHARELANE_VAR_GREETING ${both}"; echo "to stderr" >&2'
            """)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let echoed = try #require(lines.first { $0.hasPrefix("    go hello _") }, "\(result.output)")
        // The record name of ben, then the share's URL, handed on from the two steps before.
        #expect(echoed.contains("|https://www.icloud.com/share/"), "\(echoed)")
        #expect(lines.contains("    to stderr"))
        // The output is under the step's start line, before its outcome line.
        let start = try #require(lines.firstIndex { $0.hasPrefix("▸ sh echo") })
        let done = try #require(lines.firstIndex { $0.hasPrefix("✔ sh echo") })
        #expect(start < lines.firstIndex(of: echoed) ?? -1 && (lines.firstIndex(of: echoed) ?? .max) < done)
    }

    @Test("a failing command fails the lane at its step, unless allow_failure; a timeout stops it")
    func failingCommands() async throws {
        var result = try await run(
            """
                  - sh: { run: 'echo "went wrong" >&2; exit 3', allow_failure: true }
                  - sh: 'exit 4'
                  - sh: 'echo never'
            """)
        #expect(result.status == 1)
        #expect(result.stdout.contains("✔ sh echo \"went wrong\" >&2; exit 3 — exit 3, allowed"), "\(result.output)")
        #expect(
            result.stdout.contains("scripting.yaml:18:9: error: sh exit 4 failed: the command exited with status 4"))
        #expect(!result.stdout.contains("never"))
        result = try await run("      - sh: { run: 'sleep 5', timeout: 300ms }")
        #expect(result.status == 1)
        #expect(result.stdout.contains("ran longer than its timeout"), "\(result.output)")
    }

    @Test("secrets never appear in a command's echoed output, nor in the reports")
    func secretsMasked() async throws {
        let secret = "s3cr3t-api-token-value"
        let report = directory.file("report.xml")
        let result = try await run(
            "      - sh: 'echo \"token is $CLOUDKIT_API_TOKEN\"; exit 1'", ["--report", "junit:" + report],
            environment: ["CLOUDKIT_API_TOKEN": secret])
        #expect(result.status == 1)
        #expect(!result.output.contains(secret))
        #expect(result.stdout.contains("token is ***"), "\(result.output)")
        #expect(!(try String(contentsOfFile: report, encoding: .utf8)).contains(secret))
    }

    @Test("validate, plan and apply never run a recipe's commands; only run does")
    func onlyRunRunsCommands() async throws {
        let marker = directory.file("ran")
        let recipe = try directory.write(
            "scripting.yaml", Self.recipe("      - sh: 'touch \"\(marker)\"'\n      - apply"))
        let store = "sqlite:" + directory.file("store.sqlite")
        for arguments in [
            ["validate", recipe], ["plan", recipe, "--store", store], ["apply", recipe, "--store", store, "--yes"],
        ] {
            let result = try await SharelaneBinary.run(arguments, in: directory.url)
            #expect(result.status == 0, "\(arguments[0]): \(result.output)")
            #expect(!FileManager.default.fileExists(atPath: marker), "\(arguments[0]) ran the command")
        }
        _ = try await SharelaneBinary.run(["run", "go", recipe, "--store", store], in: directory.url)
        #expect(FileManager.default.fileExists(atPath: marker))
    }

    @Test("an outside action gets its parameters as JSON and hands its result on; actions lists it")
    func outsideActions() async throws {
        let actions = directory.url.appendingPathComponent("actions")
        try FileManager.default.createDirectory(at: actions, withIntermediateDirectories: true)
        let echo = actions.appendingPathComponent("sharelane-echo-json")
        try """
        #!/bin/sh
        [ "$1" = "--describe" ] && { echo "Echo the parameters back"; exit 0; }
        input=$(cat)
        echo "got $input" >&2
        printf '{"input": %s, "lane": "%s"}' "$input" "$SHARELANE_LANE"
        """.write(to: echo, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: echo.path)
        let result = try await run(
            """
                  - echo-json: { n: 3, flag: true, text: "${greeting} ${record_name:ann}", register: out }
                  - sh: { run: [printf, "%s|%s", "${out.lane}", "${out.input}"] }
            """)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("✔ echo-json — result: input, lane"), "\(result.output)")
        // The parameters as JSON, variables and values put in, and a member of the result handed on (an
        // object member as its JSON).
        #expect(result.stdout.contains("    got {\"flag\":true,\"n\":3,\"text\":\"hello _"), "\(result.output)")
        #expect(result.stdout.contains("    go|{\"flag\":true,\"n\":3,\"text\":\"hello _"), "\(result.output)")
        let listed = try await SharelaneBinary.run(["actions", directory.file("scripting.yaml")], in: directory.url)
        #expect(listed.stdout.contains("echo-json  Echo the parameters back"), "\(listed.output)")
        #expect(listed.stdout.contains("sh "))
        // A step that is neither built in nor found: did you mean, over both.
        let misspelt = try await run("      - echo-jsn: { n: 1 }")
        #expect(misspelt.status == 1)
        #expect(misspelt.stderr.contains("unknown action `echo-jsn`; did you mean `echo-json`?"), "\(misspelt.output)")
    }

    @Test("run --report junit writes one test case a step, the failure with its place, as the Ant JUnit schema has it")
    func junitReport() async throws {
        let report = directory.file("report.xml")
        let json = directory.file("report.json")
        let result = try await run(
            """
                  - apply
                  - expect: { as: ben, can: write, zone: Box, to_be: false }
            """, ["--report", "junit:" + report, "--report", "json:" + json],
            environment: ["GITHUB_ACTIONS": "true"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("::error file="), "\(result.output)")
        #expect(result.stdout.contains(",line=18,col=9,"), "\(result.output)")
        let document = try JUnitDocument(contentsOf: URL(fileURLWithPath: report))
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.root == "testsuites")
        #expect(document.suites.count == 1)
        #expect(document.cases.count == 2)
        #expect(document.cases.map(\.name) == ["go › apply", "go › expect ben cannot write Box"])
        #expect(document.cases[0].failure == nil)
        let failure = try #require(document.cases[1].failure)
        #expect(failure.contains("scripting.yaml:18:9: expectation failed"), "\(failure)")
        #expect(document.suites.first?["failures"] == "1")
        #expect(document.suites.first?["tests"] == "2")
        let object =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
        #expect(object?["succeeded"] as? Bool == false)
        #expect((object?["steps"] as? [[String: Any]])?.count == 2)
    }

    @Test("the JUnit report keeps what a failing command printed in system-out, and names the class FILE.LANE")
    func junitKeepsCommandOutput() async throws {
        let report = directory.file("report.xml")
        let result = try await run(
            """
                  - sh: 'echo "seeding 3 lists"; echo "no such table: lists" >&2; exit 2'
            """, ["--report", "junit:" + report])
        #expect(result.status == 1, "\(result.output)")
        let document = try JUnitDocument(contentsOf: URL(fileURLWithPath: report))
        #expect(document.problems.isEmpty, "\(document.problems)")
        #expect(document.cases.map(\.classname) == ["scripting.go"])
        #expect(
            document.systemOut.contains(
                "--- go › sh echo \"seeding 3 lists\"; echo \"no such table: lists\" >&2; exit 2 ---\n"),
            "\(document.systemOut)")
        #expect(document.systemOut.contains("seeding 3 lists\n"), "\(document.systemOut)")
        #expect(document.systemOut.contains("no such table: lists\n"), "\(document.systemOut)")
        #expect(document.systemOut.hasSuffix("\n"), "\(document.systemOut)")
    }

    @Test("within: makes a lane pass against serve --index-lag that fails without it")
    func withinWaitsOutAnIndexLag() async throws {
        let server = try await ServeProcess(apiToken: "index-lag-token", extraArguments: ["--index-lag", "2s"])
        defer { server.stop() }
        func lane(_ within: String) async throws -> SharelaneBinary.Result {
            let recipe = try directory.write(
                "lag.yaml",
                Self.recipe(
                    """
                          - apply
                          - save: { zone: Box, record: more, type: Thing, fields: { title: More } }
                          - query: { zone: Box, type: Thing, expect: { records: 2 }\(within) }
                    """))
            return try await server.run(["run", "go", recipe])
        }
        let without = try await lane("")
        #expect(without.status == 1, "\(without.output)")
        #expect(without.stdout.contains("expected 2 records"), "\(without.output)")
        let with = try await lane(", within: 10s")
        #expect(with.status == 0, "\(with.output)")
        #expect(with.stdout.contains("held after"), "\(with.output)")
    }
}

/// A JUnit XML document read element by element, and checked against the structure of the Ant JUnit schema
/// CI servers read: `testsuites` holding `testsuite`s (name, tests, failures, errors, time), each holding
/// `testcase`s (name, classname, time) with at most one `failure` (message, type) or `error`.
final class JUnitDocument: NSObject, XMLParserDelegate {
    struct TestCase {
        var name: String
        var classname = ""
        var failure: String?
    }

    private(set) var root: String?
    private(set) var suites: [[String: String]] = []
    private(set) var cases: [TestCase] = []
    private(set) var problems: [String] = []
    /// The suite's `system-out`.
    private(set) var systemOut = ""
    private var path: [String] = []
    private var text = ""

    init(contentsOf url: URL) throws {
        super.init()
        let parser = XMLParser(data: try Data(contentsOf: url))
        parser.delegate = self
        if !parser.parse() { problems.append("not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")") }
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let parent = path.last
        func require(_ keys: [String]) {
            for key in keys where attributes[key] == nil { problems.append("<\(name)> without \(key)") }
        }
        switch name {
        case "testsuites":
            if parent != nil { problems.append("<testsuites> inside <\(parent ?? "")>") }
            root = name
        case "testsuite":
            if parent != "testsuites" && parent != nil { problems.append("<testsuite> inside <\(parent ?? "")>") }
            require(["name", "tests", "failures", "errors", "time"])
            if let time = attributes["time"], Double(time) == nil { problems.append("time \(time) is not seconds") }
            suites.append(attributes)
        case "testcase":
            if parent != "testsuite" { problems.append("<testcase> inside <\(parent ?? "")>") }
            require(["name", "classname", "time"])
            cases.append(TestCase(name: attributes["name"] ?? "", classname: attributes["classname"] ?? ""))
        case "failure", "error":
            if parent != "testcase" { problems.append("<\(name)> inside <\(parent ?? "")>") }
            require(["message", "type"])
        case "properties", "property", "system-out", "system-err", "skipped": break
        default: problems.append("unknown element <\(name)>")
        }
        path.append(name)
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        path.removeLast()
        if name == "failure", !cases.isEmpty { cases[cases.count - 1].failure = text }
        if name == "system-out" { systemOut = text }
        if name == "testsuite", let suite = suites.last, let tests = suite["tests"], Int(tests) != cases.count {
            problems.append("testsuite says \(tests) tests, holds \(cases.count)")
        }
    }
}
