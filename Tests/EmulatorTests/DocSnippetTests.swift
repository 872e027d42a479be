import Foundation
import SharelaneTestSupport
import Testing

/// The shell snippets of Docs/CloudKit.md run as written, against a real `sharelane serve`.
@Suite struct DocSnippetTests {
    /// The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in a document, inside its code fence.
    static func snippet(_ name: String, in document: String) throws -> String {
        let url = BuiltProducts.packageRoot.appendingPathComponent(document)
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let begin = text.range(of: "<!-- \(name):begin -->"),
            let end = text.range(of: "<!-- \(name):end -->", range: begin.upperBound..<text.endIndex)
        else { throw FixtureError(message: "\(document) has no \(name) markers") }
        let block = text[begin.upperBound..<end.lowerBound]
        guard let open = block.range(of: "```sh\n"),
            let close = block.range(of: "```", range: open.upperBound..<block.endIndex)
        else { throw FixtureError(message: "the \(name) block of \(document) has no ```sh fence") }
        return String(block[open.upperBound..<close.lowerBound])
    }

    @Test("the curl snippet signs in, makes a zone, saves a record and finds it")
    func curlSnippet() async throws {
        let script = try Self.snippet("curl-snippet", in: "Docs/CloudKit.md")
        let server = try await ServeProcess(apiToken: "doc+snippet/token=")
        defer { server.stop() }
        let result = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-euo", "pipefail", "-c", script],
            environment: ["SERVE": server.url, "TOKEN": server.apiToken, "PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)\n\(server.log)")
        // Three answers: the zone, the saved record, and the query that finds it.
        #expect(result.stdout.contains(#""zoneName":"Lists""#) || result.stdout.contains(#""zoneName" : "Lists""#))
        let records = result.stdout.components(separatedBy: #""recordName":"milk""#).count - 1
        #expect(records == 2, "\(result.stdout)")
    }

    @Test("the faults snippet sets the network, reads it back, and mends it")
    func faultsSnippet() async throws {
        let script = try Self.snippet("faults-snippet", in: "Docs/CloudKit.md")
        let server = try await ServeProcess(apiToken: "doc-faults-token")
        defer { server.stop() }
        let result = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-euo", "pipefail", "-c", script],
            environment: ["SERVE": server.url, "TOKEN": server.apiToken, "PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)\n\(server.log)")
        // The answer of the POST and of the GET, as the comment in the block shows them, then a good network.
        let set = #"{"faults":"unavailable=3%,lost-answer=1%","latency":"80ms~20ms","seed":7,"throttle":"40/s"}"#
        #expect(result.stdout == set + set + "{}", "\(result.stdout)")
        #expect(script.contains("# " + set))
        #expect(server.log.contains("Network conditions changed: none"), "\(server.log)")
    }
}
