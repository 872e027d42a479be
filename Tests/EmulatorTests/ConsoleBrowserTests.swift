import Foundation
import SharelaneTestSupport
import Testing

/// The console as a person looks at it: a real `sharelane serve` on a free loopback port, filled by the demo
/// recipe's lane over http:, read by headless Chromium. Screenshots of the main pages are kept in
/// `.build/console-screenshots/` for people to look at; nothing is compared with them.
@Suite(
    .serialized,
    .enabled(
        if: ConsoleBrowser.shouldRun,
        "Chromium is not installed (apt-get install chromium); SHARELANE_REQUIRE_BROWSER=1 makes this a failure"))
struct ConsoleBrowserTests {
    /// A server with the demo recipe applied and its lane run, and a browser signed in to its console.
    struct Demo {
        let server: ServeProcess
        let browser: ConsoleBrowser
        let overview: String

        init() async throws {
            server = try await ServeProcess(apiToken: "console-browser-token")
            let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
            let lane = try await server.run(["run", "demo", recipe])
            guard lane.status == 0 else { throw FixtureError(message: "the demo lane failed:\n\(lane.output)") }
            browser = try ConsoleBrowser()
            // The token once, in the address as Web Services requests carry it (its page posts it, with the
            // browser's scripts on); the cookie does the rest.
            overview = try await browser.dom("\(server.url)/?ckAPIToken=\(server.apiToken)")
        }

        /// The DOM of a console page, loaded with the session cookie only.
        func dom(_ path: String) async throws -> String { try await browser.dom(server.url + path) }

        /// The record name of the user with this email address, from the overview's links.
        func recordName(of email: String) throws -> String {
            let pattern = #/href="/users/([^"/]+)">([^<]+)</a>/#
            for match in overview.matches(of: pattern) where match.output.2 == email { return String(match.output.1) }
            throw FixtureError(message: "the overview has no link to \(email)")
        }
    }

    @Test func everyPageLinkedFromTheOverviewLoadsWithoutTheToken() async throws {
        let demo = try await Demo()
        defer { demo.server.stop() }
        #expect(demo.overview.contains("<h1>Overview</h1>"), "signing in with ?ckAPIToken= did not show the overview")
        #expect(demo.overview.contains("iCloud.com.example.Lists"))
        #expect(demo.overview.contains("development"))
        // Every link of the overview, then the links of those pages: the users' zones and their views of the
        // matrix, graph and history. A browser start costs seconds here, so of the second level one page of
        // each shape is loaded (`/graph?as=…` for one user, not for all four).
        var queue = Self.links(in: demo.overview).map { (path: $0, depth: 1) }
        var seen = Set(queue.map(\.path))
        var shapes = Set(queue.map { Self.shape($0.path) })
        var loaded: [String: String] = [:]
        while !queue.isEmpty, loaded.count < 60 {
            let (path, depth) = queue.removeFirst()
            let page = try await demo.dom(path)
            loaded[path] = page
            guard depth < 2 else { continue }
            for link in Self.links(in: page) where seen.insert(link).inserted {
                if shapes.insert(Self.shape(link)).inserted { queue.append((link, depth + 1)) }
            }
        }
        #expect(loaded.count >= 15, "only \(loaded.count) pages were linked: \(loaded.keys.sorted())")
        for required in ["/access", "/graph", "/history"] {
            #expect(loaded[required] != nil, "the overview does not link \(required)")
        }
        #expect(loaded.keys.contains { $0.contains("/private/FamilyLists") }, "no zone page was linked")
        for (path, page) in loaded.sorted(by: { $0.key < $1.key }) {
            #expect(page.contains("</main>"), "\(path) is not a console page:\n\(page.prefix(400))")
            #expect(!page.contains("class=\"error\""), "\(path) shows an error:\n\(page)")
            #expect(!page.contains("action=\"/console/signin\""), "\(path) asked to sign in again")
            #expect(!page.contains(demo.server.apiToken), "\(path) shows the API token")
        }
        #expect(!demo.server.log.contains(demo.server.apiToken), "the server's log shows the API token")
        // The address with the token started no session; the page it answered posted the token.
        #expect(demo.server.log.contains("GET / 401"), "\(demo.server.log)")
        #expect(demo.server.log.contains("POST /console/signin 303"), "\(demo.server.log)")
    }

    @Test func theMatrixAndTheGraphShowTheDemosPeople() async throws {
        let demo = try await Demo()
        defer { demo.server.stop() }
        let access = try await demo.dom("/access")
        let rows = Self.matrixRows(access)
        #expect(Self.matrixColumns(access) == ["FamilyLists", "Trips/italy"])
        #expect(rows["alice@example.com"] == ["owner", "owner"])
        #expect(rows["bob@example.com"] == ["write", "none"])
        #expect(rows["carol@example.com"] == ["none", "read (public)"])
        #expect(rows["dana@example.com"] == ["read", "none"])

        let graph = try await demo.dom("/graph")
        #expect(graph.contains("<svg"))
        for node in ["alice@example.com", "FamilyLists", "Trips", "italy", "bob@example.com", "carol@example.com"] {
            #expect(graph.contains(">\(node)</text>"), "the graph has no node \(node)")
        }
        #expect(graph.contains(">read-write, accepted</text>"))
        #expect(graph.contains(">public read-only, accepted</text>"))

        let history = try await demo.dom("/history")
        let eggs = try #require(history.range(of: ">eggs</a>"), "the history does not show bob's record")
        let milk = try #require(history.range(of: ">milk</a>"))
        #expect(eggs.lowerBound < milk.lowerBound, "bob's newer record is not listed first")

        let shots = [
            ("console-overview.png", "/"), ("console-access.png", "/access"), ("console-graph.png", "/graph"),
            ("console-history.png", "/history"), ("console-requests.png", "/requests"),
            ("console-zone.png", "/users/\(try demo.recordName(of: "alice@example.com"))/private/FamilyLists"),
            ("console-bob.png", "/users/\(try demo.recordName(of: "bob@example.com"))"),
        ]
        for (name, path) in shots {
            let file = try await demo.browser.screenshot(demo.server.url + path, name: name)
            let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            #expect(size > 10_000, "the screenshot of \(path) is nearly empty (\(size) bytes)")
        }
    }

    @Test func viewingAsCarolHidesTheFamilyLists() async throws {
        let demo = try await Demo()
        defer { demo.server.stop() }
        let carol = try demo.recordName(of: "carol@example.com")
        let dana = try demo.recordName(of: "dana@example.com")
        for path in ["/users/\(carol)", "/access?as=\(carol)", "/graph?as=\(carol)", "/history?as=\(carol)"] {
            let page = await Self.main(try demo.dom(path))
            #expect(page.contains("Viewing as <strong>carol@example.com</strong>"), "\(path)")
            #expect(!page.contains("FamilyLists"), "\(path) shows carol the lists she was never invited to")
            #expect(!page.contains("groceries"), "\(path) shows carol a record she may not see")
            #expect(page.contains("italy"), "\(path) hides the trip carol joined")
        }
        #expect(Self.matrixRows(try await demo.dom("/access?as=\(carol)"))["carol@example.com"] == ["read (public)"])
        let danas = await Self.main(try demo.dom("/users/\(dana)"))
        #expect(danas.contains("FamilyLists"))
        #expect(!danas.contains("Trips"), "dana sees the trip she is not in")
        try await demo.browser.screenshot(demo.server.url + "/access?as=\(carol)", name: "console-access-as-carol.png")
    }

    // MARK: - Reading pages

    /// The console's own links in a page (no sign-out, no fragments), `&amp;` read back.
    static func links(in page: String) -> [String] {
        var links: [String] = []
        for match in page.matches(of: #/href="(/[^"#]*)/#) {
            let link = String(match.output.1).replacingOccurrences(of: "&amp;", with: "&")
            if link.hasPrefix("/console/") || links.contains(link) { continue }
            links.append(link)
        }
        return links
    }

    /// A link with its user names taken out: `/users/*/private/Trips`, `/graph?as=*`.
    static func shape(_ link: String) -> String {
        link.replacing(#//users/[^/?]+/#, with: "/users/*").replacing(#/(as|owner)=[^&]+/#) { "\($0.output.1)=*" }
    }

    /// The page's content, without the header's "view as" list, which names every user.
    static func main(_ page: String) -> String {
        guard let start = page.range(of: "<main>"), let end = page.range(of: "</main>") else { return "" }
        return String(page[start.upperBound..<end.lowerBound])
    }

    static func matrixColumns(_ page: String) -> [String] {
        page.matches(of: #/<th scope="col">([^<]*)</th>/#).map { String($0.output.1) }.filter { $0 != "user" }
    }

    /// Each row of the access matrix: the user, and the text of each cell.
    static func matrixRows(_ page: String) -> [String: [String]] {
        var rows: [String: [String]] = [:]
        for row in page.matches(of: #/<tr><th scope="row">([^<]*)</th>(.*?)</tr>/#) {
            rows[String(row.output.1)] = row.output.2.matches(of: #/<td[^>]*>([^<]*)</td>/#).map {
                String($0.output.1)
            }
        }
        return rows
    }
}
