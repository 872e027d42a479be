import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import ShareKit
import SharingReport

/// One page of the console: the common frame (title, navigation, the "view as" form, who is viewed as) around
/// a body that the handler rendered. Plain HTML and CSS, no script: every page works with JavaScript off.
struct ConsolePage {
    /// A user the page may be viewed as, for the "view as" form.
    struct Choice {
        var recordName: UserRecordName
        var label: String
    }

    var title: String
    /// The user the page shows the store as; nil for the whole store (read as each owner).
    var viewer: Choice?
    /// The users of the "view as" form; empty when the store cannot list them.
    var choices: [Choice] = []
    /// Where the "view as" form goes: the same page with `?as=` (`/` goes on to the user's page).
    var viewAsAction = "/"
    var body: String

    /// The whole document.
    var html: String {
        var navigation = [("Overview", "/")]
        if let viewer {
            navigation.append(("Databases", Self.userPath(viewer.recordName)))
        }
        let query = viewer.map { "?as=" + Self.component($0.recordName) } ?? ""
        navigation += [
            ("Access", "/access" + query), ("Graph", "/graph" + query), ("History", "/history" + query),
            ("Requests", "/requests"),
        ]
        let links = navigation.map { "<a href=\"\(HTML.escaped($0.1))\">\(HTML.escaped($0.0))</a>" }.joined(
            separator: " ")
        var form = ""
        if !choices.isEmpty {
            let options = choices.map { choice in
                let selected = choice.recordName == viewer?.recordName ? " selected" : ""
                return
                    "<option value=\"\(HTML.escaped(choice.recordName))\"\(selected)>\(HTML.escaped(choice.label))</option>"
            }.joined()
            form = """
                <form class="view-as" method="get" action="\(HTML.escaped(viewAsAction))">\
                <label>View as <select name="as"><option value="">everyone (each owner's view)</option>\(options)\
                </select></label> <button type="submit">Show</button></form>
                """
        }
        let banner =
            viewer.map { viewer in
                """
                <p class="viewing">Viewing as <strong>\(HTML.escaped(viewer.label))</strong>: exactly what the store \
                returns to this user (private, shared and public databases). \
                <a href="\(HTML.escaped(viewAsAction == "/" ? "/" : viewAsAction))">Stop viewing as</a></p>

                """
            } ?? ""
        return """
            \(Self.head(title: title, style: Self.css + "\n" + AccessMatrixRenderer.css))
            <body>
            <header><span class="brand">sharelane console</span> <nav>\(links)</nav> \(form) \
            \(Self.signOutForm(check: ConsoleSessions.formCheck))</header>
            <main>
            \(banner)<h1>\(HTML.escaped(title))</h1>
            \(body)
            </main>
            <footer>Read-only: nothing on these pages changes the store.</footer>
            </body>
            </html>

            """
    }

    /// Every console page's start, to its `</head>`: the title after the console's name, and `style`.
    static func head(title: String, style: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escaped(title)) · sharelane console</title>
        <style>
        \(style)
        </style>
        </head>
        """
    }

    /// The page as a response.
    func response(status: HTTPResponse.Status = .ok) -> Response {
        Self.response(html, status: status)
    }

    /// Any HTML as a response; never cached, since it shows live data and sessions.
    static func response(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if let name = HTTPField.Name("X-Content-Type-Options") { headers[name] = "nosniff" }
        if let name = HTTPField.Name("Content-Security-Policy") {
            // No script at all; styles are inline in the page.
            headers[name] = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'"
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    // MARK: - Links

    /// A path segment or query value: everything but unreserved characters percent-encoded.
    static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// A user's databases.
    static func userPath(_ user: UserRecordName) -> String { "/users/\(component(user))" }

    /// A zone as `user` sees it in `database`; a shared zone names its owner.
    static func zonePath(_ user: UserRecordName, _ database: DatabaseScope, _ zoneID: ZoneID) -> String {
        var path = "\(userPath(user))/\(WireSpelling.database(database))/\(component(zoneID.zoneName))"
        if database == .shared { path += "?owner=\(component(zoneID.ownerRecordName))" }
        return path
    }

    /// A moment as people read it: `2024-05-01 09:00:00 UTC`.
    static func time(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// The console's style: quiet, readable, printable.
    static let css = """
        body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1f2328; background: #ffffff; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: 12px 20px; padding: 10px 24px;
          background: #f6f8fa; border-bottom: 1px solid #d0d7de; }
        header .brand { font-weight: 700; }
        header nav a { margin-right: 14px; }
        header .signout { margin-left: auto; }
        header .signout button { font: inherit; color: #0969da; background: none; border: 0; padding: 0;
          cursor: pointer; }
        header .signout button:hover { text-decoration: underline; }
        form.view-as select, form.view-as button, main.signin input, main.signin button { font: inherit; }
        main { padding: 8px 24px 24px; max-width: 1200px; }
        main.signin { max-width: 560px; margin: 40px auto; }
        main.signin label { display: block; margin: 12px 0; }
        main.signin input { width: 100%; box-sizing: border-box; padding: 6px; }
        footer { padding: 12px 24px; color: #656d76; font-size: 13px; border-top: 1px solid #d0d7de; }
        a { color: #0969da; text-decoration: none; }
        a:hover { text-decoration: underline; }
        h1 { font-size: 24px; margin: 16px 0 8px; }
        h2 { font-size: 18px; margin: 24px 0 8px; border-bottom: 1px solid #d8dee4; padding-bottom: 4px; }
        h3 { font-size: 15px; margin: 16px 0 6px; }
        code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; padding: 1px 4px;
          border-radius: 4px; }
        table.data { border-collapse: collapse; margin: 8px 0 16px; }
        table.data th, table.data td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left;
          vertical-align: top; }
        table.data thead th { background: #f6f8fa; }
        table.data td.number { text-align: right; }
        table.requests { table-layout: fixed; width: 100%; }
        table.requests col.time { width: 8.5em; }
        table.requests col.request { width: 30%; }
        table.requests col.user { width: 12em; }
        table.requests col.answer { width: 5.5em; }
        table.requests td { overflow-wrap: anywhere; }
        dl.fields { margin: 0; display: grid; grid-template-columns: max-content auto; gap: 0 10px; }
        dl.fields dt { color: #656d76; }
        dl.fields dd { margin: 0; word-break: break-word; }
        .muted, .empty { color: #656d76; }
        .viewing { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px; border-radius: 6px; }
        .error { background: #ffebe9; border: 1px solid #ff8182; padding: 8px 12px; border-radius: 6px; }
        .graph { overflow-x: auto; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px; }
        .graph svg { max-width: 100%; height: auto; }
        details pre { background: #f6f8fa; padding: 8px; overflow-x: auto; font-size: 12px; }
        .indent { display: inline-block; }
        """
}
