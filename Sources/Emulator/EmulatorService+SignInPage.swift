import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import ShareKit
import SharingReport

// The emulator's stand-in for Apple's sign-in page: where a `redirectURL` leads. Apple's page asks for an
// Apple ID, then sends the browser to the sign-in callback with `ckWebAuthToken`; this one asks for an email
// address (the emulator's users are email addresses), signs that user in, and does the same.
extension EmulatorService {
    /// The path of the sign-in page (`GET`, what `redirectURL` names) and of its form (`POST`).
    static let signInPagePath = WireSpelling.signInPath
    static let signInFormPath = WireSpelling.signInPath + "/form"

    /// The query parameter that names where the page sends the browser with the token: a loopback
    /// `http://` URL, such as the one-shot server of `sharelane login`.
    static let callbackParameter = "callback"

    /// The `redirectURL` of a refusal: the sign-in page on the address the request's connection reached (the
    /// socket's, never the `Host` header, which a client writes and could point at another server), with a
    /// new one-time ticket. A refused request of an allowed page (its `Origin`) makes a ticket for that page,
    /// so that the popup hands the token to it.
    func redirectURL(_ request: Request, context: EmulatorRequestContext) async -> String? {
        guard let address = context.localAddress else { return nil }
        let ticket = await tickets.issue(opener: openerOrigin(request.headers[.origin]))
        return "http://\(address)\(Self.signInPagePath)?ticket=\(ticket)"
    }

    /// `GET /auth/signin?ticket=…[&callback=…]`: the sign-in form.
    ///
    /// Opened as CloudKit JS opens it, in a popup from a web app's page: the page's origin is the one the
    /// ticket was issued to (the `Origin` of the refused request), else the one in the `Referer` header (an
    /// `https` page sends none to this `http` one). When that origin is allowed
    /// (`EmulatorConfiguration.allowsOrigin`), the form carries it, and the signed-in page hands the token to
    /// that origin alone (`postMessage`), never to `*`.
    func signInPage(_ request: Request) async -> Response {
        let ticket = request.uri.queryParameters["ticket"].map(String.init)
        let callback = request.uri.queryParameters[Self.callbackParameter[...]].map(String.init)
        let opener = await tickets.opener(of: ticket) ?? openerOrigin(request.headers[.referer])
        guard await tickets.isValid(ticket) else { return Self.expiredTicketPage(opener: opener) }
        if let callback, Self.loopbackCallback(callback) == nil {
            return Self.page(
                "Sign-in callback refused",
                "<p class=\"error\">The callback \(HTML.escaped(callback)) is not a loopback http:// address; the "
                    + "emulator hands tokens only to this machine.</p>", status: .badRequest)
        }
        let hidden =
            "<input type=\"hidden\" name=\"ticket\" value=\"\(HTML.escaped(ticket ?? ""))\">"
            + (callback.map { "<input type=\"hidden\" name=\"callback\" value=\"\(HTML.escaped($0))\">" } ?? "")
            + (opener.map { "<input type=\"hidden\" name=\"opener\" value=\"\(HTML.escaped($0))\">" } ?? "")
        return Self.page(
            "Sign in to sharelane serve",
            """
            <p>Sign in as a user of this emulator by email address (a new address becomes a new user).</p>
            <form method="post" action="\(Self.signInFormPath)">\(hidden)
            <p><label>Email address <input type="email" name="emailAddress" required autofocus></label></p>
            <p><label>Name (optional) <input type="text" name="name"></label></p>
            <p><button type="submit">Sign in</button></p>
            </form>
            """)
    }

    /// `POST /auth/signin/form`: signs the user in, spends the ticket, and sends the browser to the callback
    /// with `ckWebAuthToken` (or, without a callback, shows the token to paste).
    func signInForm(_ request: Request, context: EmulatorRequestContext) async -> Response {
        var request = request
        let body =
            (try? await request.collectBody(upTo: 16 << 10)).map {
                String(decoding: $0.readableBytesView, as: UTF8.self)
            }
            ?? ""
        let form = Console.formFields(body)
        let email = (form["emailAddress"] ?? "").trimmingCharacters(in: .whitespaces)
        let callback = form["callback"].flatMap { $0.isEmpty ? nil : $0 }
        var opener = openerOrigin(form["opener"])
        if let callback, Self.loopbackCallback(callback) == nil {
            return Self.page(
                "Sign-in callback refused",
                "<p class=\"error\">The callback is not a loopback http:// address.</p>", status: .badRequest)
        }
        if let problem = EmailAddress.problem(email) {
            return Self.page(
                "Sign in to sharelane serve",
                "<p class=\"error\">\(HTML.escaped(problem)). Go back and try again.</p>", status: .badRequest)
        }
        guard let ticketOpener = await tickets.spend(form["ticket"]) else {
            return Self.expiredTicketPage(opener: opener)
        }
        // The page the ticket was made for wins over what the form says.
        if let ticketOpener { opener = ticketOpener }
        let user: User
        do {
            user = try await signIn(email: email, name: form["name"].flatMap { $0.isEmpty ? nil : $0 }, in: nil)
        } catch {
            return Self.page(
                "Sign-in failed", "<p class=\"error\">\(HTML.escaped("\(error)"))</p>", status: .badRequest)
        }
        context.caller.user = user.recordName
        let token = await tokens.issue(for: user.recordName)
        if let callback, var components = Self.loopbackCallback(callback) {
            var items = components.percentEncodedQueryItems ?? []
            items.append(
                URLQueryItem(
                    name: WireSpelling.webAuthTokenParameter, value: WebServicesTransportEncoding.percentEncoded(token))
            )
            components.percentEncodedQueryItems = items
            var headers = HTTPFields()
            headers[.location] = components.url?.absoluteString ?? callback
            headers[.cacheControl] = "no-store"
            return Response(status: .seeOther, headers: headers)
        }
        if let opener {
            // CloudKit JS's sign-in popup: the opener waits for a message whose `ckSession` is the token.
            return Self.page(
                "Signed in",
                "<p>Signed in as \(HTML.escaped(user.email ?? email)). This window closes by itself; if it stays "
                    + "open, close it and return to the app.</p>",
                message: ["ckSession": token], to: opener)
        }
        return Self.page(
            "Signed in",
            """
            <p>Signed in as \(HTML.escaped(user.email ?? email)). Paste this web auth token where it is asked for \
            (it is a secret: it acts as this user until it expires):</p>
            <p><code>\(HTML.escaped(token))</code></p>
            """)
    }

    /// The origin of the page that opened the sign-in popup, when it is allowed to receive a token.
    func openerOrigin(_ text: String?) -> String? {
        guard let text, let origin = EmulatorConfiguration.origin(of: text), configuration.allowsOrigin(origin)
        else { return nil }
        return origin
    }

    /// The callback as URL components when it is an `http://` address on this machine; nil otherwise.
    static func loopbackCallback(_ text: String) -> URLComponents? {
        guard let components = URLComponents(string: text), components.scheme == "http",
            let host = components.host, ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host),
            components.user == nil, components.password == nil
        else { return nil }
        return components
    }

    private static func expiredTicketPage(opener: String? = nil) -> Response {
        let reason =
            "This sign-in link was already used, has expired, or was not made by this emulator (it may have "
            + "restarted). Make the request again for a new redirectURL."
        return page(
            "Sign-in link expired", "<p class=\"error\">\(HTML.escaped(reason))</p>", status: .forbidden,
            message: opener.map { _ in ["errorMessage": reason] }, to: opener)
    }

    /// A page of the sign-in flow. With `message` and `to`, a script posts the message to the window that
    /// opened this one, for that origin only, then closes the window.
    private static func page(
        _ title: String, _ body: String, status: HTTPResponse.Status = .ok, message: [String: String]? = nil,
        to opener: String? = nil
    ) -> Response {
        var script = ""
        var scriptSource = ""
        if let message, let opener,
            let json = try? JSONSerialization.data(
                withJSONObject: message, options: [.sortedKeys, .withoutEscapingSlashes])
        {
            // JSON inside <script>: "<" written as \u003c so that no "</script>" ends the element early.
            let payload = String(decoding: json, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
            let encoder = JSONEncoder()
            encoder.outputFormatting = .withoutEscapingSlashes
            let target = String(decoding: (try? encoder.encode(opener)) ?? Data("\"\"".utf8), as: UTF8.self)
                .replacingOccurrences(of: "<", with: "\\u003c")
            let nonce = SignInTickets.randomToken()
            scriptSource = " 'nonce-\(nonce)'"
            script = """
                <script nonce="\(nonce)">
                if (window.opener) { window.opener.postMessage(\(payload), \(target)); window.close(); }
                </script>
                """
        }
        let html = """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escaped(title))</title>
            <style>body{font-family:system-ui,sans-serif;max-width:32em;margin:3em auto;padding:0 1em}\
            .error{color:#b00020}code{word-break:break-all}</style></head>
            <body><h1>\(HTML.escaped(title))</h1>
            \(body)
            \(script)
            </body></html>

            """
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if let name = HTTPField.Name("X-Content-Type-Options") { headers[name] = "nosniff" }
        if let name = HTTPField.Name("Content-Security-Policy") {
            headers[name] =
                "default-src 'none'; style-src 'unsafe-inline'"
                + (scriptSource.isEmpty ? "" : "; script-src\(scriptSource)")
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

/// Percent-encoding of query values as the client does it (`+`, `/` and `=` included).
enum WebServicesTransportEncoding {
    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
