import Foundation
import Hummingbird
import ShareKit
import SharingReport

extension Console {
    /// `/requests`: the last requests of clients, newest first: method, path, user, answer, and for each
    /// refusal the store's reason — the access rule, and the share, participant and permission that decided
    /// it — with users named by email where the shown world knows them.
    func requestsPage() async throws -> Response {
        let entries = await requests.newestFirst()
        let users = (try? await reader.listedUsers()) ?? []
        var emails: [UserRecordName: String] = [:]
        for user in users { if let email = user.email { emails[user.recordName] = email } }
        func named(_ text: String) -> String {
            var text = text
            for (recordName, email) in emails { text = text.replacingOccurrences(of: recordName, with: email) }
            return text
        }
        var body =
            "<p>The last \(RequestHistory.limit) requests of clients (Web Services, sign-ins, <code>/_sharelane/</code>), "
            + "newest first, in every container and environment. A refusal says why, in the store's words: the rule, "
            + "and the share, participant and permission that decided it. Where a client was answered as though a "
            + "zone or record did not exist (so that it learns nothing of what it may not see), this page says what "
            + "the store knows.</p>\n"
        if entries.isEmpty {
            body += "<p class=\"empty\">No requests yet.</p>\n"
        } else {
            let clock = DateFormatter()
            clock.dateFormat = "HH:mm:ss.SSS"
            clock.timeZone = TimeZone(identifier: "UTC")
            body +=
                "<table class=\"data requests\"><colgroup><col class=\"time\"><col class=\"request\">"
                + "<col class=\"user\"><col class=\"answer\"><col class=\"why\"></colgroup>"
                + "<thead><tr><th>time (UTC)</th><th>request</th><th>user</th>"
                + "<th>answer</th><th>refused, and why</th></tr></thead><tbody>\n"
            for entry in entries {
                let user = entry.user.map { emails[$0] ?? $0 } ?? "-"
                let why = entry.refusals.map { refusal in
                    let what = refusal.subject.map { "<code>\(HTML.escaped(named($0)))</code>: " } ?? ""
                    return
                        "\(what)<strong>\(HTML.escaped(refusal.code))</strong> \(HTML.escaped(named(refusal.reason)))"
                }.joined(separator: "<br>")
                body += "<tr><td>\(clock.string(from: entry.at))</td>"
                body += "<td><code>\(HTML.escaped(entry.method)) \(HTML.escaped(entry.path))</code></td>"
                body += "<td>\(HTML.escaped(user))</td><td class=\"number\">\(entry.status)</td><td>\(why)</td></tr>\n"
            }
            body += "</tbody></table>\n"
        }
        return ConsolePage(title: "Requests", viewer: nil, choices: [], viewAsAction: "/requests", body: body)
            .response()
    }
}
