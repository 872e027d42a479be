import Foundation
import HTTPTypes
import Hummingbird
import SharingReport

// The console's pages around a session: signing in, the page that posts a token given in an address, and
// signing out. None of them shows a token, and none puts one in an address.
extension ConsolePage {
    /// The sign-in form: the API token once, then a session cookie. `message` says why it is shown again.
    static func signIn(next: String, message: String?) -> String {
        frame(
            title: "Sign in",
            """
            <h1>sharelane console</h1>
            <p>A read-only view of the store that this <code>sharelane serve</code> serves. Give the emulator's API \
            token once (printed when <code>sharelane serve</code> starts, or the one given with \
            <code>--api-token</code>); the browser then keeps a session cookie.</p>
            \(message.map { "<p class=\"error\">\(HTML.escaped($0))</p>" } ?? "")
            <form method="post" action="/console/signin">
            <input type="hidden" name="next" value="\(HTML.escaped(next))">
            <label>API token <input type="password" name="token" autocomplete="off" required autofocus></label>
            <button type="submit">Sign in</button>
            </form>
            """)
    }

    /// A console page opened with the API token in its address (`/?ckAPIToken=…`): `401`, since a GET starts no
    /// session, with a form that posts the token to the sign-in form's address. A script (this page's only one,
    /// allowed by its nonce) first takes the token out of the address shown, then posts the form while the page
    /// is still loading, so the browser replaces this entry of the tab's history and Back never returns to it;
    /// with scripts off, a button posts it.
    static func postingSignIn(token: String, next: String) -> Response {
        let nonce = SignInTickets.randomToken()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let target = String(decoding: (try? encoder.encode(next)) ?? Data("\"/\"".utf8), as: UTF8.self)
            .replacingOccurrences(of: "<", with: "\\u003c")
        let html = frame(
            title: "Signing in",
            """
            <h1>sharelane console</h1>
            <p>Signing in… The address you opened holds the API token, and a browser keeps every address it opens \
            in its history: next time, give the token in the sign-in form at <code>/console/signin</code>.</p>
            <form method="post" action="/console/signin">
            <input type="hidden" name="next" value="\(HTML.escaped(next))">
            <input type="hidden" name="token" value="\(HTML.escaped(token))">
            <button type="submit">Continue</button>
            </form>
            <script nonce="\(nonce)">
            history.replaceState(null, "", \(target));
            document.forms[0].submit();
            </script>
            """)
        var response = response(html, status: .unauthorized)
        if let policy = HTTPField.Name("Content-Security-Policy") {
            response.headers[policy] =
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-\(nonce)'; form-action 'self'"
        }
        // Never `no-referrer`: under it a browser sends `Origin: null` with the form's POST, which is no allowed
        // origin.
        if let referrer = HTTPField.Name("Referrer-Policy") { response.headers[referrer] = "same-origin" }
        return response
    }

    /// The sign-out page of `GET /console/signout`, and the refusal of a sign-out without the session's check.
    static func signOut(check: String?, message: String?) -> String {
        frame(
            title: "Sign out",
            """
            <h1>sharelane console</h1>
            \(message.map { "<p class=\"error\">\(HTML.escaped($0))</p>" } ?? "")
            \(check.map { "<p>Sign this browser out of the console?</p>" + signOutForm(check: $0) } ?? "")
            \(check == nil ? "<p><a href=\"/\">Back to the overview</a></p>" : "")
            """)
    }

    /// The sign-out button: a POST carrying the session's form check, which a page of another site cannot read.
    static func signOutForm(check: String?) -> String {
        guard let check else { return "" }
        return """
            <form class="signout" method="post" action="/console/signout">\
            <input type="hidden" name="csrf" value="\(HTML.escaped(check))">\
            <button type="submit">Sign out</button></form>
            """
    }

    /// A page of the session's flow: the console's style, no navigation.
    private static func frame(title: String, _ body: String) -> String {
        """
        \(head(title: title, style: css))
        <body>
        <main class="signin">
        \(body)
        </main>
        </body>
        </html>

        """
    }
}
