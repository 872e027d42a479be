import Foundation
import GRDB
import SharelaneTestSupport
import Testing

/// What pages of other sites can do to a `sharelane serve` on a developer's machine, tried in headless
/// Chromium against a real serve: a page of a name rebound to this machine, a page of an origin not allowed
/// sending requests that need no preflight, and what the browser keeps of a console sign-in.
@Suite(
    .enabled(
        if: ConsoleBrowser.shouldRun,
        "Chromium is not installed (apt-get install chromium); SHARELANE_REQUIRE_BROWSER=1 makes this a failure"))
struct BrowserBoundaryTests {
    typealias H = EmulatorHarness

    static func driver(_ name: String) -> String {
        BuiltProducts.packageRoot.appendingPathComponent("Tests/EmulatorTests/Browser/\(name)").path
    }

    /// The last line a driver printed, as JSON.
    static func report(_ result: SharelaneBinary.Result, _ server: ServeProcess) throws -> [String: Any] {
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            "the driver said: \(result.stdout)\n\(result.stderr)\nserve:\n\(server.log)")
    }

    @Test("a rebound name's page reads nothing, and a page of another origin changes nothing with no-cors POSTs")
    func attackerPagesGetNothing() async throws {
        let chromium = try #require(ConsoleBrowser.executable, "SHARELANE_REQUIRE_BROWSER=1 but Chromium is missing")
        let node = try #require(BrowserSignInTests.node, "node is needed to drive the browser")
        let server = try await ServeProcess(apiToken: "boundary-token")
        defer { server.stop() }
        let api = ["ckAPIToken": server.apiToken]
        // Alice keeps a diary in her private database.
        let signIn = try await H.raw(
            server.url, "/auth/signin", query: api, body: #"{"emailAddress":"alice@example.com"}"#)
        let alice = try #require(signIn.json["ckWebAuthToken"] as? String, "\(signIn.text)")
        let asAlice = api.merging(["ckWebAuthToken": alice]) { $1 }
        let zone = try await H.raw(
            server.url, H.databasePath("private", "zones/modify"), query: asAlice,
            body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Diary"}}}]}"#)
        #expect(zone.status == 200, "\(zone.text)")
        let saved = try await H.raw(
            server.url, H.databasePath("private", "records/modify"), query: asAlice,
            body: #"""
                {"zoneID":{"zoneName":"Diary"},"operations":[{"operationType":"create","record":{"recordType":"Entry",\#
                "recordName":"secret","fields":{"text":{"value":"the diary's secret"}}}}]}
                """#)
        #expect(saved.status == 200, "\(saved.text)")

        let result = try await SharelaneBinary.runProcess(
            node, [Self.driver("attack-driver.mjs"), chromium.path, server.url, server.apiToken, alice, H.container])
        let report = try Self.report(result, server)
        #expect(result.status == 0, "\(report)")

        // The rebound page (its document from the attacker's server): each request refused by name, naming the
        // option.
        let rebinding = try #require(report["rebinding"] as? [String: Any], "\(report)")
        #expect(rebinding["page"] as? Int == 200, "\(rebinding)")
        let attempt = try #require(rebinding["signIn"] as? [String: Any], "\(rebinding)")
        #expect(attempt["status"] as? Int == 421, "\(attempt)")
        #expect((attempt["text"] as? String)?.contains("--allow-host rebind.example") == true, "\(attempt)")
        #expect(rebinding["read"] is NSNull, "the rebound page read alice's records: \(rebinding)")

        // The other origin's no-cors POSTs were sent, and refused before they did anything.
        #expect(report["noCors"] as? [String] == ["opaque", "opaque", "opaque"], "\(report)")
        let faults = try await H.raw(server.url, "/_sharelane/faults", query: api, method: "GET")
        #expect(faults.text == "{}", "the page changed the network: \(faults.text)")
        let diary = try await H.raw(
            server.url, H.databasePath("private", "records/query"), query: asAlice,
            body: #"{"zoneID":{"zoneName":"Diary"},"query":{"recordType":"Entry"}}"#)
        let names = (diary.json["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String }
        #expect(names == ["secret"], "\(diary.text)")
        let lookup = try await H.raw(
            server.url, H.databasePath("public", "users/lookup/email"), query: asAlice,
            body: #"{"users":[{"emailAddress":"alice@example.com"},{"emailAddress":"mallory@example.com"}]}"#)
        let found = (lookup.json["users"] as? [[String: Any]] ?? []).map { $0["userRecordName"] != nil }
        #expect(found == [true, false], "the page made a user: \(lookup.text)")
        for refused in ["POST /_sharelane/faults 403", "POST /auth/signin 403", "records/modify 403"] {
            #expect(server.log.contains(refused), "\(server.log)")
        }
    }

    @Test("a console sign-in leaves the API token in no address the tab goes back to or the address bar offers")
    func consoleSignInKeepsNoTokenInHistory() async throws {
        let chromium = try #require(ConsoleBrowser.executable, "SHARELANE_REQUIRE_BROWSER=1 but Chromium is missing")
        let node = try #require(BrowserSignInTests.node, "node is needed to drive the browser")
        let token = "history-token-5d1e0c"
        let server = try await ServeProcess(apiToken: token)
        defer { server.stop() }
        let profile = try TemporaryDirectory("chromium-history")
        let result = try await SharelaneBinary.runProcess(
            node, [Self.driver("history-driver.mjs"), chromium.path, server.url, token, profile.path])
        let report = try Self.report(result, server)
        #expect(result.status == 0, "\(report)")
        #expect(
            report["steps"] as? [String] == [
                "Overview after the address with the token", "Access matrix by its link",
                "signed out: sharelane console", "Overview after the sign-in form", "Change history by its link",
            ], "\(report)")
        // Back and Forward: no entry holds the token.
        let tabHistory = try #require(report["tabHistory"] as? [String], "\(report)")
        #expect(tabHistory.count >= 4, "\(tabHistory)")
        #expect(!tabHistory.contains { $0.contains(token) }, "\(tabHistory)")

        // The profile's History file: the address the person opened is there (no answer can take it out), but
        // hidden, so the address bar never offers it; no address the console made holds the token.
        let file = profile.url.appendingPathComponent("Default/History").path
        var configuration = Configuration()
        configuration.readonly = true
        let rows = try DatabaseQueue(path: file, configuration: configuration).read { db in
            try Row.fetchAll(db, sql: "SELECT url, hidden FROM urls")
        }
        #expect(rows.contains { ($0["url"] as String).hasSuffix("/history") }, "\(rows)")
        let holding = rows.filter { ($0["url"] as String).contains(token) }
        #expect(holding.map { $0["url"] as String } == ["\(server.url)/?ckAPIToken=\(token)"], "\(rows)")
        #expect(holding.allSatisfy { ($0["hidden"] as Int) == 1 }, "the address bar offers the token: \(rows)")
    }
}
