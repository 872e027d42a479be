import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import ShareKit
import SharingReport

/// The read-only web console of `sharelane serve`, beside the Web Services routes: the containers and
/// environments clients used, the users, each user's databases, zones, records and shares, the access
/// matrix, the sharing graph and the change history, each as any user sees it. See Docs/Console.md.
///
/// Every page is a GET that reads the store as a user (`ConsoleReader`); the only POSTs start and end a
/// session. The API token is asked once (the sign-in form), then a session cookie stands for it.
struct Console: Sendable {
    /// Every container and environment the emulator keeps; the console shows one at a time.
    let worlds: any StoreWorlds
    /// The world the pages show (`viewing(_:)` picks it from the request).
    var world = StoreWorld(container: StoreWorld.defaultContainer, environment: .development)
    /// The shown world's store, opened when a page first reads it.
    var store: any Store {
        get throws { try worlds.store(for: world) }
    }
    let configuration: EmulatorConfiguration
    let sessions: ConsoleSessions
    let containers: ConsoleContainerLog
    /// The network conditions in force, shown on the overview.
    let network: NetworkFaults
    /// The last requests of clients, for the Requests page.
    let requests: RequestHistory

    var reader: ConsoleReader {
        get throws { ConsoleReader(store: try store) }
    }

    /// At most this many records on the history page.
    static let historyLimit = 500

    /// Adds the console's routes: the sign-in form and sign-out open to all, the pages behind a session.
    func register(on router: Router<EmulatorRequestContext>) {
        let console = self
        router.get("/console/signin") { request, _ in
            ConsolePage.response(
                ConsolePage.signIn(next: Self.safeNext(request.uri.queryParameters["next"]), message: nil))
        }
        router.post("/console/signin") { request, _ in try await console.signIn(request) }
        router.get("/console/signout") { request, _ in await console.signOutPage(request) }
        router.post("/console/signout") { request, _ in await console.signOut(request) }
        let pages = router.group().add(
            middleware: ConsoleSessionMiddleware(configuration: configuration, sessions: sessions))
        pages.get("/") { request, _ in
            await console.answer { try await console.viewing(request).overview(request) }
        }
        pages.get("/console/world") { request, _ in await console.answer { try console.chooseWorld(request) } }
        pages.get("/users/:user") { request, context in
            await console.answer { try await console.viewing(request).userPage(Self.parameter(context, "user")) }
        }
        pages.get("/users/:user/:database/:zone") { request, context in
            await console.answer {
                try await console.viewing(request).zonePage(
                    user: Self.parameter(context, "user"), database: Self.parameter(context, "database"),
                    zone: Self.parameter(context, "zone"), owner: request.uri.queryParameters["owner"].map(String.init))
            }
        }
        pages.get("/access") { request, _ in
            await console.answer { try await console.viewing(request).accessPage(request) }
        }
        pages.get("/graph") { request, _ in
            await console.answer { try await console.viewing(request).graphPage(request) }
        }
        pages.get("/history") { request, _ in
            await console.answer { try await console.viewing(request).historyPage(request) }
        }
        pages.get("/requests") { request, _ in
            await console.answer { try await console.viewing(request).requestsPage() }
        }
    }

    // MARK: - Worlds

    /// The cookie that remembers which container and environment the pages show.
    static let worldCookieName = "sharelane_console_world"

    /// This console showing the world the request chose (`/console/world` remembers it in a cookie), else
    /// the default container's development if the store keeps it, else the first world it keeps.
    func viewing(_ request: Request) throws -> Console {
        let chosen = request.cookies[Self.worldCookieName].flatMap { Self.world(from: $0.value) }
        let known = try worlds.worlds()
        let standard = StoreWorld(container: StoreWorld.defaultContainer, environment: .development)
        let world = chosen ?? (known.contains(standard) ? standard : known.first ?? standard)
        var console = self
        console.world = world
        return console
    }

    /// `GET /console/world?world=CONTAINER/ENVIRONMENT`: shows that world from now on, from the overview.
    func chooseWorld(_ request: Request) throws -> Response {
        let given = request.uri.queryParameters["world"].map(String.init) ?? ""
        guard let world = Self.world(from: given) else {
            throw ConsoleFailure(
                message: "\"\(given)\" is not a container and environment: give CONTAINER/development or "
                    + "CONTAINER/production", status: .badRequest)
        }
        var response = Self.redirect(to: "/")
        response.setCookie(
            Cookie(
                name: Self.worldCookieName, value: world.description, path: "/", httpOnly: true, sameSite: .strict))
        return response
    }

    /// `CONTAINER/ENVIRONMENT`, as `StoreWorld.description` writes it; nil for anything else.
    static func world(from text: String) -> StoreWorld? {
        let text = text.removingPercentEncoding ?? text
        guard let slash = text.lastIndex(of: "/"),
            let environment = WireSpelling.environment(String(text[text.index(after: slash)...]))
        else { return nil }
        let container = String(text[..<slash])
        guard StoreWorld.containerProblem(container) == nil else { return nil }
        return StoreWorld(container: container, environment: environment)
    }

    // MARK: - Sessions

    /// `POST /console/signin` with `token` (and `next`, the page to go on to) as a form.
    private func signIn(_ request: Request) async throws -> Response {
        var request = request
        let body =
            (try? await request.collectBody(upTo: 16 << 10)).map {
                String(decoding: $0.readableBytesView, as: UTF8.self)
            }
            ?? ""
        let form = Self.formFields(body)
        let next = Self.safeNext(form["next"].map { $0[...] })
        guard let token = form["token"], configuration.acceptsAPIToken(token) else {
            return ConsolePage.response(
                ConsolePage.signIn(next: next, message: "That is not this emulator's API token."),
                status: .unauthorized)
        }
        return await Self.startSession(sessions, goingTo: next)
    }

    /// `POST /console/signout` with the session's form check (`csrf`): ends the session and forgets the cookie.
    /// Without the check (a form of another site) the session stays, and the answer says so.
    private func signOut(_ request: Request) async -> Response {
        var request = request
        let body =
            (try? await request.collectBody(upTo: 16 << 10)).map {
                String(decoding: $0.readableBytesView, as: UTF8.self)
            }
            ?? ""
        let id = request.cookies[ConsoleSessions.cookieName]?.value
        guard await sessions.isLive(id) else { return Self.signedOut() }
        guard await sessions.end(id, check: Self.formFields(body)["csrf"]) else {
            return ConsolePage.response(
                ConsolePage.signOut(
                    check: nil,
                    message: "That sign-out did not come from this console's own page, so the session stays. "
                        + "Sign out with the button of a console page."),
                status: .forbidden)
        }
        return Self.signedOut()
    }

    /// `GET /console/signout` (an old link or bookmark): a GET never signs out, since any site can make a
    /// browser follow a link; it shows the session's sign-out button instead.
    private func signOutPage(_ request: Request) async -> Response {
        guard let check = await sessions.formCheck(of: request.cookies[ConsoleSessions.cookieName]?.value) else {
            return Self.redirect(to: "/console/signin")
        }
        return ConsolePage.response(ConsolePage.signOut(check: check, message: nil))
    }

    /// The sign-in page, the cookie forgotten.
    private static func signedOut() -> Response {
        var response = redirect(to: "/console/signin")
        response.setCookie(cookie("", maxAge: 0))
        return response
    }

    /// A new session, and a redirect to `place` that sets its cookie.
    static func startSession(_ sessions: ConsoleSessions, goingTo place: String) async -> Response {
        var response = redirect(to: place)
        let id = await sessions.start()
        response.setCookie(cookie(id, maxAge: sessions.maxAgeSeconds))
        return response
    }

    /// The session cookie: only for HTTP (no script reads it), only from this site's own pages, for a while.
    static func cookie(_ value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: ConsoleSessions.cookieName, value: value, maxAge: maxAge, path: "/", httpOnly: true,
            sameSite: .strict)
    }

    /// A redirect to a page of this server: `place` goes through `safeNext`, so a `Location` never names
    /// another host.
    static func redirect(to place: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = safeNext(place[...])
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    /// Where to go after signing in: a path on this server, never another site (`//host`, `/\host`), and no
    /// control character (a browser drops a tab or newline from a URL, so `/<tab>/host` would be `//host`).
    static func safeNext(_ next: Substring?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.hasPrefix("/\\"),
            !next.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return "/" }
        return String(next)
    }

    /// The fields of an `application/x-www-form-urlencoded` body.
    static func formFields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            guard let name = parts.first else { continue }
            fields[decoded(name)] = parts.count > 1 ? decoded(parts[1]) : ""
        }
        return fields
    }

    // MARK: - Answers

    /// A page, or the error it met as a page of its own (the store's refusal with its status; a missing user
    /// or zone as 404).
    private func answer(_ build: () async throws -> Response) async -> Response {
        do {
            return try await build()
        } catch let error as ConsoleFailure {
            return errorPage(error.message, status: error.status)
        } catch let error as ShareError {
            return errorPage(
                "The store answered \(WireSpelling.errorCode(error.code)): \(error.reason)",
                status: HTTPResponse.Status(code: error.code == .zoneNotFound ? 404 : 500))
        } catch {
            return errorPage("The console failed: \(error)", status: .internalServerError)
        }
    }

    private func errorPage(_ message: String, status: HTTPResponse.Status) -> Response {
        ConsolePage(
            title: status == .notFound ? "Not found" : "Something went wrong",
            body: "<p class=\"error\">\(HTML.escaped(message))</p>\n<p><a href=\"/\">Back to the overview</a></p>"
        ).response(status: status)
    }

    /// A path parameter, percent-decoded.
    static func parameter(_ context: EmulatorRequestContext, _ name: String) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }
}

/// A page that cannot be shown, and the status it answers with.
struct ConsoleFailure: Error {
    var message: String
    var status: HTTPResponse.Status
}
