import CloudKitWire
import Emulator
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// The emulator on a developer's machine, over raw HTTP: the names it answers to (its `Host` header), pages of
/// origins it refuses before anything runs, the sign-in popup's opener from the ticket, the throttle's counts
/// without a user, and the network endpoint's cookie. Browsers play the same in BrowserBoundaryTests.
@Suite("Host and Origin")
struct HostAndOriginTests {
    typealias H = EmulatorHarness

    @Test("a request naming another host is refused with 421 and the option; this server's names are answered")
    func hostNames() async throws {
        try await H.withEmulator { base in
            let port = try #require(URLComponents(string: base)?.port)
            let path = H.databasePath("public", "users/caller")
            for host in ["rebind.example:\(port)", "127.0.0.1.nip.io:\(port)", "localhost.:\(port)", "evil"] {
                let refused = try await H.raw(
                    base, path, query: ["ckAPIToken": H.apiToken], method: "GET", headers: [("Host", host)])
                #expect(refused.status == 421, "\(host): \(refused.text)")
                let name = try #require(host.split(separator: ":").first)
                #expect(refused.text.contains("--allow-host \(name)"), "\(refused.text)")
            }
            // The console, the sign-in page and the faults endpoint too: every route is behind the check.
            for route in ["/", "/console/signin", "/_sharelane/faults", "/auth/signin"] {
                let refused = try await H.raw(base, route, method: "GET", headers: [("Host", "rebind.example")])
                #expect(refused.status == 421, "\(route)")
            }
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST:\(port)", "[::1]:\(port)", "127.0.0.1"] {
                let answer = try await H.raw(
                    base, path, query: ["ckAPIToken": H.apiToken], method: "GET", headers: [("Host", host)])
                #expect(
                    answer.status == 421 && answer.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED",
                    "\(host): \(answer.text)")
            }
        }
        var configuration = EmulatorConfiguration()
        configuration.allowedHosts = ["DevBox.local"]
        #expect(configuration.allowsHost("devbox.local:8420", localAddress: nil))
        #expect(configuration.allowsHost("10.0.0.7:8420", localAddress: "10.0.0.7:8420"))
        #expect(!configuration.allowsHost("10.0.0.8:8420", localAddress: "10.0.0.7:8420"))
        #expect(!configuration.allowsHost("devbox.local.evil.example", localAddress: nil))
        #expect(!configuration.allowsHost("localhost:80@evil.example", localAddress: nil))
        #expect(!configuration.allowsHost("localhost:x", localAddress: nil))
    }

    @Test("the upload URL names the host the client called, the webcourier URL this server's address; both work")
    func handedOutURLsWork() async throws {
        try await H.withEmulator { base in
            let port = try #require(URLComponents(string: base)?.port)
            let alice = try await H.signIn(base, "alice@example.com")
            let query = ["ckAPIToken": H.apiToken, "ckWebAuthToken": alice.token]
            let byName = [("Host", "localhost:\(port)")]
            let upload = try await H.raw(
                base, H.databasePath("private", "assets/upload"), query: query,
                body: #"{"zoneID":{"zoneName":"_defaultZone"},"tokens":[{"recordName":"milk","recordType":"Todo","#
                    + #""fieldName":"photo"}]}"#,
                headers: byName)
            let uploadURL = try #require(
                ((upload.json["tokens"] as? [[String: Any]])?.first?["url"] as? String), "\(upload.text)")
            #expect(uploadURL.hasPrefix("http://localhost:\(port)/"), "\(uploadURL)")
            let channel = try await H.raw(
                base, "/device/1/\(H.container)/\(H.environment)/tokens/create", query: query,
                body: #"{"apnsEnvironment":"development"}"#, headers: byName)
            let webcourier = try #require(channel.json["webcourierURL"] as? String, "\(channel.text)")
            // The webcourier URL names the address the connection reached, never the Host header's.
            #expect(webcourier.hasPrefix("http://127.0.0.1:\(port)/"), "\(webcourier)")
            // Followed as a client follows them (its Host header the URL's), neither is refused by name.
            for url in [uploadURL, webcourier + "&wait=0"] {
                let components = try #require(URLComponents(string: url))
                let answer = try await H.raw(
                    base, components.path,
                    query: Dictionary(
                        uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }),
                    body: url == uploadURL ? "bytes" : nil, method: url == uploadURL ? "POST" : "GET",
                    headers: byName, contentType: "application/octet-stream")
                #expect(answer.status != 421 && answer.status < 400, "\(url): \(answer.status) \(answer.text)")
            }
        }
    }

    @Test("a request of a page of an origin not allowed is refused before it runs, whatever its method and type")
    func disallowedOriginsDoNothing() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            let asAlice = ["ckAPIToken": H.apiToken, "ckWebAuthToken": alice.token]
            let evil = [("Origin", "http://evil.example")]
            let writes: [(String, [String: String], String)] = [
                ("/_sharelane/faults", ["ckAPIToken": H.apiToken], #"{"faults":"unavailable=100%"}"#),
                ("/auth/signin", ["ckAPIToken": H.apiToken], #"{"emailAddress":"mallory@example.com"}"#),
                (
                    H.databasePath("private", "zones/modify"), asAlice,
                    #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Planted"}}}]}"#
                ),
            ]
            for (path, query, body) in writes {
                for type in ["text/plain", "application/x-www-form-urlencoded", "application/json"] {
                    let refused = try await H.raw(
                        base, path, query: query, body: body, headers: evil, contentType: type)
                    #expect(refused.status == 403, "\(path) \(type): \(refused.text)")
                    #expect(refused.text.contains("--allow-origin http://evil.example"), "\(refused.text)")
                    #expect(refused.headers["access-control-allow-origin"] == nil)
                }
            }
            let read = try await H.raw(
                base, H.databasePath("private", "zones/list"), query: asAlice, method: "GET", headers: evil)
            #expect(read.status == 403)
            // Nothing changed; the same requests without an Origin (curl, Node, sharelane) are served.
            let faults = try await H.raw(base, "/_sharelane/faults", query: ["ckAPIToken": H.apiToken], method: "GET")
            #expect(faults.text == "{}")
            let zones = try await H.raw(base, H.databasePath("private", "zones/list"), query: asAlice, method: "GET")
            #expect(zones.status == 200)
            #expect(!zones.text.contains("Planted"), "\(zones.text)")
            // Origin text no browser writes is no allowed origin, and never repeated in a header.
            for odd in [
                "http://LOCALHOST:5173", "http://localhost:5173/app", "http://localhost:5173 x", "null",
                "http://localhost:5173, http://evil.example", "http://localhost:80", "https://localhost:443",
            ] {
                let answer = try await H.raw(
                    base, H.databasePath("public", "users/caller"), query: ["ckAPIToken": H.apiToken],
                    method: "GET", headers: [("Origin", odd)])
                #expect(answer.status == 403, "\(odd): \(answer.text)")
                #expect(answer.headers["access-control-allow-origin"] == nil, "\(odd)")
                #expect(!answer.text.contains(odd), "the answer repeats \(odd): \(answer.text)")
            }
        }
    }

    @Test("the popup hands the token to the allowed page whose refused request made its ticket, with no Referer")
    func ticketCarriesTheOpener() async throws {
        let app = "https://app.example.test"
        try await H.withEmulator(allowedOrigins: [app]) { base in
            let refused = try await H.raw(
                base, H.databasePath("public", "users/caller"), query: ["ckAPIToken": H.apiToken], method: "GET",
                headers: [("Origin", app)])
            let redirect = try #require(refused.json["redirectURL"] as? String, "\(refused.text)")
            let ticket = try #require(URLComponents(string: redirect)?.queryItems?.first { $0.name == "ticket" }?.value)
            // An https page opening serve's http page sends no Referer.
            let page = try await H.raw(base, "/auth/signin", query: ["ticket": ticket], method: "GET")
            #expect(BrowserClientTests.hiddenValue("opener", in: page.text) == app, "\(page.text)")
            // The form is what the popup posts; its opener field left out, the ticket still knows.
            let answer = try await H.raw(
                base, "/auth/signin/form", body: "ticket=\(H.percentEncoded(ticket))&emailAddress=mei%40example.com",
                contentType: "application/x-www-form-urlencoded")
            #expect(answer.text.contains(#"window.opener.postMessage({"ckSession":"#), "\(answer.text)")
            #expect(answer.text.contains("\"\(app)\")"), "\(answer.text)")
            // A ticket made for a request of no page names no opener.
            let plain = try await H.raw(
                base, H.databasePath("public", "users/caller"), query: ["ckAPIToken": H.apiToken], method: "GET")
            let other = try #require(
                URLComponents(string: plain.json["redirectURL"] as? String ?? "")?.queryItems?.first {
                    $0.name == "ticket"
                }?.value)
            let plainPage = try await H.raw(base, "/auth/signin", query: ["ticket": other], method: "GET")
            #expect(BrowserClientTests.hiddenValue("opener", in: plainPage.text) == nil)
        }
    }

    @Test("requests without a user are counted by page and sign-ins apart, so they cannot use up a sign-in's share")
    func throttleKeys() async throws {
        let clock = MovableClock()
        let conditions = try NetworkConditions(latency: nil, throttle: "2/s", faults: nil, seed: nil)
        try await H.withEmulator(clock: clock.emulatorClock, networkConditions: conditions) { base in
            let read = H.databasePath("public", "records/query")
            let body = #"{"query":{"recordType":"Nothing"}}"#
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(try await H.raw(base, read, query: ["ckAPIToken": H.apiToken], body: body).status)
            }
            #expect(statuses.last == 429, "\(statuses)")
            // The next sign-in, and a page's own tokenless request, each have their own share.
            let signIn = try await H.raw(
                base, "/auth/signin", query: ["ckAPIToken": H.apiToken], body: #"{"emailAddress":"mei@example.com"}"#)
            #expect(signIn.status == 200, "\(signIn.text)")
            let page = try await H.raw(
                base, read, query: ["ckAPIToken": H.apiToken], body: body,
                headers: [("Origin", "http://localhost:5173")])
            #expect(page.status != 429, "\(page.text)")
        }
    }

    @Test("the faults endpoint takes the console's cookie from no page but the console's own")
    func faultsCookieFromOtherPages() async throws {
        try await ConsoleHarness.with { console, _ in
            let session = try await console.signIn()
            let port = try #require(URLComponents(string: console.base)?.port)
            // A dev server on localhost:5173 is the same site as the console on localhost:PORT: the browser
            // sends the cookie with its requests.
            let fromApp = try await console.post(
                "/_sharelane/faults", body: #"{"faults":"unavailable=100%"}"#, cookie: session,
                headers: [("Origin", "http://localhost:5173")])
            #expect(fromApp.status == 401, "\(fromApp.text)")
            let own = try await console.post(
                "/_sharelane/faults", body: #"{"latency":"10ms"}"#, cookie: session,
                headers: [("Origin", "http://127.0.0.1:\(port)")])
            #expect(own.status == 200, "\(own.text)")
            #expect(own.text.contains("10ms"))
        }
    }
}
