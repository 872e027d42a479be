import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// The console's routes in process, as a browser meets them: signing in with the API token once, the
/// session cookie, names from the store kept as text, and "view as" showing only what the store returns to
/// that user.
@Suite struct ConsoleRouteTests {
    @Test func withoutASessionEveryPageAnswersTheSignInFormAndNoData() async throws {
        try await ConsoleHarness.with { console, fixture in
            for path in ["/", "/access", "/graph", "/history", "/users/\(fixture.alice.recordName)"] {
                let page = try await console.get(path)
                #expect(page.status == 401, "\(path)")
                #expect(page.text.contains("action=\"/console/signin\""), "\(path) shows no sign-in form")
                #expect(!page.text.contains("alice@example.com"), "\(path) shows data before sign-in")
                #expect(!page.text.contains("Secrets"), "\(path) shows data before sign-in")
            }
        }
    }

    @Test func theTokenInTheQueryIsAnsweredWithAPageThatPostsIt() async throws {
        try await ConsoleHarness.with { console, _ in
            let token = ConsoleHarness.formEncoded(ConsoleHarness.apiToken)
            let answer = try await console.get("/access?zone=Secrets&ckAPIToken=\(token)")
            // A GET starts no session: the page posts the token, and the address it goes on to has none.
            #expect(answer.status == 401)
            #expect(answer.setCookie == nil)
            #expect(answer.text.contains("<form method=\"post\" action=\"/console/signin\">"))
            #expect(answer.text.contains("name=\"next\" value=\"/access?zone=Secrets\""))
            #expect(answer.text.contains("history.replaceState(null, \"\", \"/access?zone=Secrets\")"))
            let policy = try #require(answer.headers.first(name: "Content-Security-Policy"))
            let nonce = try #require(answer.text.firstMatch(of: /<script nonce="([^"]+)">/)?.1)
            #expect(policy.contains("script-src 'nonce-\(nonce)'"), "\(policy)")
            #expect(answer.headers.first(name: "Referrer-Policy") == "same-origin")
            #expect(answer.headers.first(name: "Cache-Control") == "no-store")
            // What the page posts starts the session.
            let token2 = try #require(BrowserClientTests.hiddenValue("token", in: answer.text))
            let posted = try await console.post(
                "/console/signin", form: ["token": token2, "next": "/access?zone=Secrets"])
            #expect(posted.status == 303)
            #expect(posted.location == "/access?zone=Secrets")
            let cookie = try #require(posted.setCookie)
            #expect(cookie.hasPrefix("sharelane_console="))
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=28800"] {
                #expect(cookie.contains(attribute), "the cookie lacks \(attribute): \(cookie)")
            }
            let session = String(cookie.split(separator: ";")[0])
            let page = try await console.get("/access?zone=Secrets", cookie: session)
            #expect(page.status == 200)
            #expect(page.text.contains("bob@example.com"))
            #expect(!page.text.contains(ConsoleHarness.apiToken))
            #expect(!page.text.contains(token))
            // The request log names paths only.
            #expect(console.log.all.contains { $0.contains("GET /access 401") }, "\(console.log.all)")
            #expect(!console.log.all.joined().contains(ConsoleHarness.apiToken))
            #expect(!console.log.all.joined().contains(token))
        }
    }

    @Test func everyPlaceToGoOnToIsAPathOfThisServer() async throws {
        try await ConsoleHarness.with { console, _ in
            let token = ConsoleHarness.formEncoded(ConsoleHarness.apiToken)
            // `//access` is a page of this server, never `//access` (a host, to a browser).
            for asked in ["//access?zone=Secrets", "///access?zone=Secrets"] {
                let posting = try await console.get("\(asked)&ckAPIToken=\(token)")
                let next = BrowserClientTests.hiddenValue("next", in: posting.text)
                #expect(next == "/access?zone=Secrets", "\(asked): \(next ?? posting.text)")
                let signIn = try await console.get(asked)
                #expect(BrowserClientTests.hiddenValue("next", in: signIn.text)?.hasPrefix("//") == false)
            }
            for elsewhere in ["/\t/evil.example/", "/\n/evil.example", "/\u{7F}x", "/x\u{85}"] {
                let away = try await console.post(
                    "/console/signin", form: ["token": ConsoleHarness.apiToken, "next": elsewhere])
                #expect(away.location == "/", "signing in went on to \(elsewhere.debugDescription)")
            }
        }
    }

    @Test func aWrongTokenIsRefusedAndStartsNoSession() async throws {
        try await ConsoleHarness.with { console, _ in
            let query = try await console.get("/?ckAPIToken=not-the-token")
            #expect(query.status == 401)
            #expect(query.setCookie == nil)
            #expect(query.text.contains("That is not this emulator&#39;s API token."))
            #expect(!query.text.contains("not-the-token"), "the page repeats the token it was given")
            let form = try await console.post("/console/signin", form: ["token": "nope", "next": "/history"])
            #expect(form.status == 401)
            #expect(form.setCookie == nil)
            let forged = try await console.get("/", cookie: "sharelane_console=0123456789abcdef")
            #expect(forged.status == 401)
        }
    }

    @Test func theSignInFormStartsASessionAndGoesOnOnlyToThisServer() async throws {
        try await ConsoleHarness.with { console, _ in
            let signIn = try await console.post(
                "/console/signin", form: ["token": ConsoleHarness.apiToken, "next": "/history"])
            #expect(signIn.status == 303)
            #expect(signIn.location == "/history")
            let session = String(try #require(signIn.setCookie).split(separator: ";")[0])
            #expect(try await console.get("/history", cookie: session).status == 200)
            for elsewhere in ["//evil.example/", "https://evil.example/", "/\\evil.example"] {
                let away = try await console.post(
                    "/console/signin", form: ["token": ConsoleHarness.apiToken, "next": elsewhere])
                #expect(away.location == "/", "signing in went on to \(elsewhere)")
            }
        }
    }

    @Test func signingOutTakesAPostWithTheSessionsCheck() async throws {
        try await ConsoleHarness.with { console, _ in
            let session = try await console.signIn()
            let overview = try await console.get("/", cookie: session)
            #expect(overview.status == 200)
            let check = try #require(BrowserClientTests.hiddenValue("csrf", in: overview.text), "\(overview.text)")
            // A link of another site (a GET) signs nobody out; it shows the button.
            let link = try await console.get("/console/signout", cookie: session)
            #expect(link.status == 200)
            #expect(link.text.contains("action=\"/console/signout\""))
            #expect(try await console.get("/", cookie: session).status == 200)
            // A form of another site (its POST carries no check, or a wrong one) neither.
            for form in [[:], ["csrf": "0123"], ["csrf": check + "0"]] {
                let forged = try await console.post("/console/signout", form: form, cookie: session)
                #expect(forged.status == 403, "\(form)")
                #expect(try await console.get("/", cookie: session).status == 200)
            }
            let out = try await console.post("/console/signout", form: ["csrf": check], cookie: session)
            #expect(out.status == 303)
            #expect(out.location == "/console/signin")
            #expect(out.setCookie?.contains("Max-Age=0") == true)
            #expect(try await console.get("/", cookie: session).status == 401)
        }
    }

    @Test func namesAndValuesFromTheStoreStayText() async throws {
        try await ConsoleHarness.with { console, fixture in
            let session = try await console.signIn()
            let zone = try await console.get("/users/\(fixture.alice.recordName)/private/Secrets", cookie: session)
            #expect(zone.status == 200)
            #expect(zone.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!zone.text.contains("<script"))
            #expect(zone.text.contains("Alice&#39;s &lt;secrets&gt;"))
            let user = try await console.get("/users/\(fixture.alice.recordName)", cookie: session)
            #expect(user.text.contains("Alice &lt;b&gt;Appleseed&lt;/b&gt;"))
            #expect(!user.text.contains("<b>Appleseed"))
            for path in ["/access", "/graph", "/history"] {
                let page = try await console.get(path, cookie: session)
                #expect(page.status == 200, "\(path)")
                #expect(!page.text.contains("<script"), "\(path)")
                #expect(!page.text.contains("<secrets>"), "\(path)")
            }
        }
    }

    @Test func viewingAsAUserShowsOnlyWhatTheStoreReturnsToThem() async throws {
        try await ConsoleHarness.with { console, fixture in
            let session = try await console.signIn()
            let carol = fixture.carol.recordName
            let bob = fixture.bob.recordName
            // Bob accepted the share: he sees the zone, its records and its column.
            let bobsPage = try await console.get("/users/\(bob)", cookie: session)
            #expect(bobsPage.text.contains("Secrets"))
            let bobsZone = try await console.get(
                "/users/\(bob)/shared/Secrets?owner=\(fixture.alice.recordName)", cookie: session)
            #expect(bobsZone.status == 200)
            #expect(bobsZone.text.contains("step-1"))
            #expect(
                try await console.get("/access?as=\(bob)", cookie: session).text.contains("<th scope=\"col\">Secrets"))
            // Carol was never invited: no zone, no records, no column, no node.
            for path in ["/users/\(carol)", "/access?as=\(carol)", "/graph?as=\(carol)", "/history?as=\(carol)"] {
                let page = try await console.get(path, cookie: session)
                #expect(page.status == 200, "\(path)")
                // The page's own content: the header's "view as" list names every user, as it should.
                let content = page.main
                #expect(content.contains("Viewing as <strong>carol@example.com</strong>"), "\(path)")
                #expect(!content.contains("Secrets"), "\(path) shows carol the zone she was not invited to")
                #expect(!content.contains("step-1"), "\(path) shows carol a record she may not see")
                #expect(!content.contains("alice@example.com"), "\(path) shows carol alice's address")
            }
            #expect(try await console.get("/history?as=\(carol)", cookie: session).text.contains("carol-note"))
            // Her empty graph speaks of what she sees, not of everyone (a pending invitation shows once accepted).
            let carolsGraph = try await console.get("/graph?as=\(carol)", cookie: session).main
            #expect(carolsGraph.contains("No shares that carol@example.com sees"), "\(carolsGraph)")
            #expect(!carolsGraph.contains("nothing is shared with anyone"))
            let sneaking = try await console.get(
                "/users/\(carol)/shared/Secrets?owner=\(fixture.alice.recordName)", cookie: session)
            #expect(sneaking.status == 404)
            #expect(!sneaking.text.contains("step-1"))
            // The whole store (no one viewed as) has it all.
            let all = try await console.get("/history", cookie: session)
            #expect(all.text.contains("step-1") && all.text.contains("carol-note"))
        }
    }

    @Test func theOverviewNamesContainersUsersAndPagesAndUnknownUsersAreNotFound() async throws {
        try await ConsoleHarness.with { console, fixture in
            let session = try await console.signIn()
            // A Web Services request names a container; the overview lists it.
            let signIn = try await EmulatorHarness.raw(
                console.base, "/auth/signin", query: ["ckAPIToken": ConsoleHarness.apiToken],
                body: #"{"emailAddress": "bob@example.com"}"#)
            #expect(signIn.status == 200)
            let token = try #require(signIn.nextToken)
            let zones = try await EmulatorHarness.raw(
                console.base, "/database/1/iCloud.com.example.Console/production/private/zones/list",
                query: ["ckAPIToken": ConsoleHarness.apiToken, "ckWebAuthToken": token], method: "GET")
            #expect(zones.status == 200)
            let overview = try await console.get("/", cookie: session)
            #expect(overview.text.contains("iCloud.com.example.Console"))
            #expect(overview.text.contains("production"))
            for user in [fixture.alice, fixture.bob, fixture.carol] {
                #expect(overview.text.contains("href=\"/users/\(user.recordName)\""))
            }
            #expect(overview.text.contains("href=\"/access\""))
            #expect(!overview.text.contains(token))
            let missing = try await console.get("/users/_nobody", cookie: session)
            #expect(missing.status == 404)
            #expect(missing.text.contains("No user _nobody in this store."))
            // The Web Services routes answer as before: JSON, with their own errors.
            let refused = try await EmulatorHarness.raw(
                console.base, "/auth/signin", body: #"{"emailAddress": "bob@example.com"}"#)
            #expect(refused.status == 401)
            #expect(refused.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        }
    }
}
