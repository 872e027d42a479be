import Foundation
import SharelaneTestSupport
import Testing

/// What a lane's `sh:` command and outside action find in their environment, through the binary: the values
/// of `.env` and `--var-file` under their own names, as fastlane loads dotenv, a credential among them masked.
@Suite("The .env and --var-file values in a lane's commands")
struct CommandEnvironmentTests {
    static let recipe = """
        sharelane: 1
        name: scripted
        vars:
          ticket: QA-000
        users:
          alice: { email: alice@example.com }
        owner: alice
        zones:
          Household: {}
        lanes:
          show:
            steps:
              - sh: 'echo "host=$API_HOST ticket=$ticket token=$DEPLOY_TOKEN"'
              - probe: { note: from an outside action }
              - expect: { records: 0, zone: Household }

        """

    /// An outside action that prints what its environment holds, on standard error (shown under its step).
    static let probe = """
        #!/bin/sh
        cat > /dev/null
        echo "outside host=$API_HOST ticket=$ticket token=$DEPLOY_TOKEN" >&2
        echo '{}'

        """

    @Test("sh: and an outside action see .env and --var-file values; a credential is masked in output and reports")
    func commandsSeeTheFileValues() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let path = try scratch.write("scripted.yaml", Self.recipe)
        try scratch.write(".env", "API_HOST=api.staging.example.com\nDEPLOY_TOKEN=dt-0123456789abcdef\n")
        let varFile = try scratch.write("qa.yaml", "ticket: QA-123\n")
        let probe = try scratch.write("actions/sharelane-probe", Self.probe)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: probe)
        let report = scratch.file("report.xml")

        let result = try await SharelaneBinary.run([
            "run", "show", path, "--store", "memory:", "--var-file", varFile, "--report", "junit:" + report,
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("    host=api.staging.example.com ticket=QA-123 token=***"), "\(result.output)")
        #expect(
            result.stdout.contains("    outside host=api.staging.example.com ticket=QA-123 token=***"),
            "\(result.output)")
        #expect(!result.output.contains("0123456789abcdef"), "\(result.output)")
        let xml = try String(contentsOfFile: report, encoding: .utf8)
        #expect(xml.contains("host=api.staging.example.com"), "\(xml)")
        #expect(!xml.contains("0123456789abcdef"), "\(xml)")
    }

    @Test("the process environment beats .env, as ${NAME} reads them")
    func environmentBeatsDotEnv() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let path = try scratch.write(
            "scripted.yaml",
            Self.recipe.replacingOccurrences(of: "      - probe: { note: from an outside action }\n", with: ""))
        try scratch.write(".env", "API_HOST=api.staging.example.com\n")
        let result = try await SharelaneBinary.run(
            ["run", "show", path, "--store", "memory:"], environment: ["API_HOST": "localhost:8080"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("    host=localhost:8080 ticket= token="), "\(result.output)")
    }
}
