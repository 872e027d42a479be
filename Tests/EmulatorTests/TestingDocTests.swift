import Foundation
import SharelaneTestSupport
import Testing

/// Docs/Testing.md's examples run as written: the `node --test` suite and the curl calls inside
/// `sharelane serve --recipe … -- …`, and the Swift example, which is `FamilyListsTests.swift` word for word.
@Suite struct TestingDocTests {
    /// The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` of Docs/Testing.md, inside its fence.
    static func example(_ name: String, fence: String) throws -> String {
        let text = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Docs/Testing.md"), encoding: .utf8)
        guard let begin = text.range(of: "<!-- \(name):begin -->"),
            let end = text.range(of: "<!-- \(name):end -->", range: begin.upperBound..<text.endIndex)
        else { throw FixtureError(message: "Docs/Testing.md has no \(name) markers") }
        let block = text[begin.upperBound..<end.lowerBound]
        guard let open = block.range(of: "```\(fence)\n"),
            let close = block.range(of: "```", range: open.upperBound..<block.endIndex)
        else { throw FixtureError(message: "the \(name) block of Docs/Testing.md has no ```\(fence) fence") }
        return String(block[open.upperBound..<close.lowerBound])
    }

    static func nodeFound() async -> Bool {
        (try? await SharelaneBinary.runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["node", "--version"]).status) == 0
    }

    @Test("the node --test suite passes inside serve --recipe … -- node --test")
    func nodeExample() async throws {
        guard await Self.nodeFound() else {
            // CI installs node (.ci/run): there a missing node fails instead.
            #expect(ProcessInfo.processInfo.environment["SHARELANE_REQUIRE_BROWSER"] == nil, "node is not installed")
            return
        }
        let scratch = try TemporaryDirectory("testing-doc")
        _ = try scratch.write("sharing.test.mjs", try Self.example("node-example", fence: "js"))
        let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
        let result = try await SharelaneBinary.run(
            [
                "serve", "--store", "memory:", "--recipe", recipe, "--lane", "demo", "--", "node", "--test",
                "sharing.test.mjs",
            ], in: scratch.url)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("# pass 3"), "\(result.stdout)")
        #expect(result.stdout.contains("# fail 0"), "\(result.stdout)")
    }

    @Test("the curl calls run inside serve --recipe … -- bash")
    func curlExample() async throws {
        let script = try Self.example("curl-fixture", fence: "sh")
        let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
        let result = try await SharelaneBinary.run([
            "serve", "--store", "memory:", "--recipe", recipe, "--", "bash", "-euo", "pipefail", "-c", script,
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains(#""bob@example.com""#), "\(result.stdout)")
        #expect(result.stdout.contains(#"{"reset":["iCloud.com.example.Lists/development"]}"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"{"restored":["iCloud.com.example.Lists/development"]}"#), "\(result.stdout)")
    }

    @Test("the Swift example is FamilyListsTests.swift, which the suite runs")
    func swiftExample() async throws {
        let file = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Tests/EmulatorTests/FamilyListsTests.swift"),
            encoding: .utf8)
        #expect(try Self.example("swift-example", fence: "swift") == file)
    }
}
