import CloudKitWire
import Emulator
import Foundation
import ShareKit
import Testing

/// A web app calls `serve` from another origin, as CloudKit JS does in a browser: CORS answers, the sign-in
/// popup handing the token to its opener, and the `redirectURL` a refusal carries.
@Suite("Browser clients")
struct BrowserClientTests {
    typealias H = EmulatorHarness

    static let app = "http://localhost:5173"

    @Test("a loopback page's preflight and requests are answered with CORS headers; another origin's are not")
    func crossOrigin() async throws {
        try await H.withEmulator(allowedOrigins: ["https://app.example.test"]) { base in
            let alice = try await H.signIn(base, "alice@example.com")
            let path = H.databasePath("private", "zones/list")
            for origin in [Self.app, "http://127.0.0.1:3000", "https://app.example.test"] {
                // The preflight of any route, answered before authentication.
                let preflight = try await H.raw(
                    base, path, method: "OPTIONS",
                    headers: [
                        ("Origin", origin), ("Access-Control-Request-Method", "POST"),
                        ("Access-Control-Request-Headers", "content-type"),
                    ])
                #expect(preflight.status == 204, "\(origin): \(preflight.text)")
                #expect(preflight.headers["access-control-allow-origin"] == origin)
                #expect(preflight.headers["access-control-allow-methods"]?.contains("POST") == true)
                #expect(
                    preflight.headers["access-control-allow-headers"]?.lowercased().contains("content-type") == true)

                // The answer names the origin and lets the page read the next token.
                let answer = try await H.raw(
                    base, path, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": alice.token], method: "GET",
                    headers: [("Origin", origin)])
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.headers["access-control-allow-origin"] == origin)
                #expect(
                    answer.headers["access-control-expose-headers"]?.contains(WireSpelling.webAuthTokenHeader) == true)
                #expect(answer.nextToken != nil)

                // A refusal too, so the page can read why.
                let refused = try await H.raw(
                    base, path, query: ["ckAPIToken": H.apiToken], method: "GET", headers: [("Origin", origin)])
                #expect(refused.status == 421)
                #expect(refused.headers["access-control-allow-origin"] == origin)
            }
            // Another origin: no CORS headers, and its preflight and requests are refused saying how to allow it.
            let stranger = "https://elsewhere.example"
            let preflight = try await H.raw(
                base, path, method: "OPTIONS",
                headers: [("Origin", stranger), ("Access-Control-Request-Method", "POST")])
            #expect(preflight.status == 403)
            #expect(preflight.headers["access-control-allow-origin"] == nil)
            #expect(preflight.text.contains("--allow-origin \(stranger)"))
            let answer = try await H.raw(
                base, path, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": alice.token], method: "GET",
                headers: [("Origin", stranger)])
            #expect(answer.status == 403)
            #expect(answer.text.contains("--allow-origin \(stranger)"))
            #expect(answer.nextToken == nil)
            #expect(answer.headers["access-control-allow-origin"] == nil)
            #expect(answer.headers["access-control-expose-headers"] == nil)
        }
    }

    @Test("allowed origins: loopback ones on any port, and exactly those --allow-origin names")
    func allowedOrigins() {
        let configuration = EmulatorConfiguration(allowedOrigins: ["https://App.Example.test/"])
        for origin in [
            "http://localhost:5173", "http://127.0.0.1", "https://127.0.0.2:8443", "http://[::1]:3000",
            "https://app.example.test",
        ] {
            #expect(configuration.allowsOrigin(origin), "\(origin)")
        }
        for origin in [
            "null", "http://localhost.evil.example", "https://app.example.test:444", "http://app.example.test",
            "file:///tmp/page.html", "http://127.0.0.1.evil.example", "",
        ] {
            #expect(!configuration.allowsOrigin(origin), "\(origin)")
        }
    }

    /// The sign-in page reached from the `redirectURL` of a refusal of a request of `origin` (nil: of no page),
    /// as a popup would ask for it (its `Referer`), and the page its form answers with.
    static func popupSignIn(
        _ base: String, origin: String? = app, referer: String?
    ) async throws -> (page: H.Answer, answer: H.Answer) {
        let refused = try await H.raw(
            base, H.databasePath("public", "users/caller"), query: ["ckAPIToken": H.apiToken], method: "GET",
            headers: origin.map { [("Origin", $0)] } ?? [])
        let redirect = try #require(refused.json["redirectURL"] as? String, "\(refused.text)")
        let components = try #require(URLComponents(string: redirect))
        let ticket = try #require(components.queryItems?.first { $0.name == "ticket" }?.value)
        let page = try await H.raw(
            base, components.path, query: ["ticket": ticket], method: "GET",
            headers: referer.map { [("Referer", $0)] } ?? [])
        var form = "ticket=\(H.percentEncoded(ticket))&emailAddress=mei%40example.com"
        if let opener = Self.hiddenValue("opener", in: page.text) { form += "&opener=\(H.percentEncoded(opener))" }
        let answer = try await H.raw(
            base, "/auth/signin/form", body: form, contentType: "application/x-www-form-urlencoded")
        return (page, answer)
    }

    static func hiddenValue(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test("the sign-in popup hands the token to its opener's origin alone, with postMessage")
    func popupPostsToOpener() async throws {
        try await H.withEmulator { base in
            let (page, answer) = try await Self.popupSignIn(base, referer: Self.app + "/lists")
            #expect(Self.hiddenValue("opener", in: page.text) == Self.app)
            #expect(answer.status == 200, "\(answer.text)")
            let token = try #require(answer.text.firstMatch(of: /"ckSession":"([^"]+)"/)?.1)
            #expect(answer.text.contains("window.opener.postMessage({\"ckSession\":\"\(token)\"}, \"\(Self.app)\")"))
            #expect(!answer.text.contains("\"*\""))
            // The script runs under a nonce, and nothing else may.
            let policy = try #require(answer.headers["content-security-policy"])
            let nonce = try #require(answer.text.firstMatch(of: /<script nonce="([^"]+)">/)?.1)
            #expect(policy.contains("script-src 'nonce-\(nonce)'"))
            // The token is good: it acts as the user who signed in.
            let caller = try await H.raw(
                base, H.databasePath("public", "users/caller"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": String(token)], method: "GET")
            #expect((caller.json["lookupInfo"] as? [String: Any])?["emailAddress"] as? String == "mei@example.com")
        }
    }

    @Test("a popup whose ticket no page asked for, opened by a page not allowed or with no Referer, posts no token")
    func popupRefusesStrangers() async throws {
        try await H.withEmulator { base in
            for referer in ["https://elsewhere.example/app", nil] {
                let (page, answer) = try await Self.popupSignIn(base, origin: nil, referer: referer)
                #expect(Self.hiddenValue("opener", in: page.text) == nil)
                #expect(answer.status == 200)
                #expect(!answer.text.contains("postMessage"), "\(referer ?? "no Referer")")
                #expect(!answer.text.contains("<script"))
            }
        }
    }

    @Test("a redirectURL names the address the connection reached, whatever the Host header says")
    func redirectFromSocket() async throws {
        try await H.withEmulator(allowedHosts: ["attacker.example"]) { base in
            let refused = try await H.raw(
                base, H.databasePath("private", "zones/list"), query: ["ckAPIToken": H.apiToken], method: "GET",
                headers: [("Host", "attacker.example:80")])
            let redirect = try #require(refused.json["redirectURL"] as? String, "\(refused.text)")
            let listening = try #require(URLComponents(string: base))
            let reached = try #require(URLComponents(string: redirect))
            #expect(reached.host == listening.host, "\(redirect)")
            #expect(reached.port == listening.port, "\(redirect)")
            #expect(!redirect.contains("attacker"))
        }
    }
}
