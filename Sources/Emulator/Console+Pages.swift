import CloudKitWire
import Foundation
import Hummingbird
import ShareKit
import SharingReport

// The pages. Each reads the store as a user and draws what came back; names and values from the store go
// through `HTML.escaped`, every one.
extension Console {
    /// The sentence shown where the store cannot list its users.
    static let cannotListUsers =
        "This store cannot list its users, so the console cannot read every owner's data: open a user's page "
        + "at /users/RECORDNAME to see the store as that user."

    // MARK: - Overview

    /// Each container and environment the store keeps or a client named, the one shown marked, the others a
    /// link that shows them.
    func worldsSection() async throws -> String {
        var requests: [StoreWorld: Int] = [:]
        for entry in await containers.entries() {
            guard let environment = WireSpelling.environment(entry.environment) else { continue }
            requests[StoreWorld(container: entry.container, environment: environment), default: 0] += entry.requests
        }
        let all = Set(try worlds.worlds()).union(requests.keys).union([world]).sorted {
            ($0.container, WireSpelling.environment($0.environment)) < (
                $1.container, WireSpelling.environment($1.environment)
            )
        }
        var body =
            "<p>Each container and environment is a world of its own, as on CloudKit: its own users, zones, "
            + "records, shares and schema.</p>\n<table class=\"data containers\"><thead><tr><th>container</th>"
            + "<th>environment</th><th>requests</th><th></th></tr></thead><tbody>\n"
        for each in all {
            let link =
                each == world
                ? "<strong>shown</strong>"
                : "<a href=\"/console/world?world=\(HTML.escaped(ConsolePage.component(each.description)))\">show</a>"
            body +=
                "<tr><td><code>\(HTML.escaped(each.container))</code></td>"
                + "<td>\(HTML.escaped(WireSpelling.environment(each.environment)))</td>"
                + "<td class=\"number\">\(requests[each] ?? 0)</td><td>\(link)</td></tr>\n"
        }
        return body + "</tbody></table>\n"
    }

    /// `/`: the containers and environments clients named, the store, the users with counts, and links.
    /// `/?as=USER` goes on to that user's page (the "view as" form of the overview).
    func overview(_ request: Request) async throws -> Response {
        if let viewer = request.uri.queryParameters["as"], !viewer.isEmpty {
            return Self.redirect(to: ConsolePage.userPath(String(viewer)))
        }
        let listed = try await reader.listedUsers()
        var body = """
            <p>The store <code>\(HTML.escaped(worlds.displayName))</code>, served as CloudKit Web Services; these \
            pages show <strong><code>\(HTML.escaped(world.description))</code></strong>. Pages show \
            what the store returns to each user; nothing here changes it.</p>
            <h2>Containers and environments</h2>

            """
        body += try await worldsSection()
        body += Self.networkSection(network.current)
        body += "<h2>Users</h2>\n"
        if let listed {
            if listed.isEmpty {
                body += "<p class=\"empty\">No users yet: sign one in, or apply a recipe with this store.</p>\n"
            } else {
                body +=
                    "<table class=\"data users\"><thead><tr><th>user</th><th>name</th><th>record name</th>"
                    + "<th>custom zones</th><th>shared with them</th></tr></thead><tbody>\n"
                for user in listed {
                    // Every private database has its default zone; the count is of the zones the user made.
                    let own = try await reader.zones(.private, as: user.recordName).filter {
                        $0.zoneID.zoneName != defaultZoneName
                    }.count
                    let shared = try await reader.zones(.shared, as: user.recordName).count
                    body +=
                        "<tr><td><a href=\"\(HTML.escaped(ConsolePage.userPath(user.recordName)))\">"
                        + "\(HTML.escaped(ConsoleReader.label(user)))</a></td>"
                        + "<td>\(HTML.escaped(user.name ?? ""))</td><td><code>\(HTML.escaped(user.recordName))</code></td>"
                        + "<td class=\"number\">\(own)</td><td class=\"number\">\(shared)</td></tr>\n"
                }
                body += "</tbody></table>\n"
                if let anyone = listed.first {
                    let publicPath = ConsolePage.zonePath(anyone.recordName, .public, ZoneID(zoneName: defaultZoneName))
                    body +=
                        "<p>The <a href=\"\(HTML.escaped(publicPath))\">public database</a> is the same for every "
                        + "user.</p>\n"
                }
            }
        } else {
            body += "<p class=\"empty\">\(HTML.escaped(Self.cannotListUsers))</p>\n"
        }
        body += """
            <h2>Who can see what</h2>
            <ul>
            <li><a href="/access">Access matrix</a>: users × shares, each cell the right the sharing rules give.</li>
            <li><a href="/graph">Sharing graph</a>: owners → zones and shared records → participants.</li>
            <li><a href="/history">Change history</a>: records, newest change first, with who made them.</li>
            </ul>

            """
        return ConsolePage(title: "Overview", choices: choices(listed), body: body).response()
    }

    /// The overview's "Network" section: the conditions Web Services requests meet now, each with what it does.
    static func networkSection(_ conditions: NetworkConditions) -> String {
        var section = "<h2>Network</h2>\n"
        guard !conditions.isGood else {
            return section
                + "<p class=\"empty\">A good network: no latency, no throttle, no faults. Rehearse a bad one with "
                + "<code>sharelane serve --latency 80ms~20ms --faults unavailable=5%</code> or "
                + "<code>POST \(NetworkFaultsEndpoint.path)</code>.</p>\n"
        }
        section +=
            "<p>Web Services requests meet a rehearsed bad network; <code>POST \(NetworkFaultsEndpoint.path)</code> "
            + "changes it.</p>\n<table class=\"data network\"><thead><tr><th>setting</th><th>value</th>"
            + "<th>what it does</th></tr></thead><tbody>\n"
        func row(_ name: String, _ value: String, _ effect: String) {
            section +=
                "<tr><td>\(name)</td><td><code>\(HTML.escaped(value))</code></td><td>\(HTML.escaped(effect))</td></tr>\n"
        }
        if let latency = conditions.latency {
            let range = latency.range
            row(
                "latency", latency.description,
                range.count == 1
                    ? "each answer waits \(range.lowerBound) ms"
                    : "each answer waits \(range.lowerBound) to \(range.upperBound) ms")
        }
        if let throttle = conditions.throttle {
            row(
                "throttle", throttle.description,
                "past \(throttle.requests) requests a \(throttle.window == .second ? "second" : "minute") from one "
                    + "user: 429 THROTTLED")
        }
        let effects: [NetworkFault: String] = [
            .unavailable: "503 TRY_AGAIN_LATER, nothing applied",
            .reset: "the connection closes before the request is read, nothing applied",
            .lostAnswer: "the request is applied, then the connection closes before the answer",
        ]
        for fault in NetworkFault.allCases where conditions.faults.hundredths[fault] != nil {
            row(
                fault.rawValue, FaultRates.written(conditions.faults.hundredths[fault] ?? 0),
                "of requests: \(effects[fault] ?? "")")
        }
        row(
            "seed", conditions.seed.map(String.init) ?? "random",
            conditions.seed == nil
                ? "a new draw of waits and faults each run"
                : "the same requests meet the same waits and faults each run")
        return section + "</tbody></table>\n"
    }

    // MARK: - A user's databases

    /// `/users/USER`: the user's private, shared and public databases with their zones, as that user.
    func userPage(_ recordName: UserRecordName) async throws -> Response {
        let user = try await existingUser(recordName)
        let listed = try await reader.listedUsers()
        let names = try await self.names(as: user, listed: listed)
        var body = "<p>\(user.name.map { HTML.escaped($0) + " · " } ?? "")record name <code>"
        body += "\(HTML.escaped(user.recordName))</code></p>\n"
        for database in DatabaseScope.allCases {
            body += "<h2>\(Self.databaseTitle(database))</h2>\n"
            let zones = try await reader.zones(database, as: user.recordName)
            guard !zones.isEmpty else {
                body += "<p class=\"empty\">\(Self.emptyDatabase(database))</p>\n"
                continue
            }
            let ownerColumn = database == .shared ? "<th>owner</th>" : ""
            body +=
                "<table class=\"data zones\"><thead><tr><th>zone</th>\(ownerColumn)<th>records</th><th>shares</th>"
                + "</tr></thead><tbody>\n"
            for zone in zones {
                let contents = try await reader.contents(of: zone.zoneID, in: database, as: user.recordName)
                let path = ConsolePage.zonePath(user.recordName, database, zone.zoneID)
                body += "<tr><td><a href=\"\(HTML.escaped(path))\">\(HTML.escaped(zone.zoneID.zoneName))</a></td>"
                if database == .shared {
                    body += "<td>\(HTML.escaped(Self.name(zone.zoneID.ownerRecordName, names)))</td>"
                }
                body +=
                    "<td class=\"number\">\(contents.records.count)</td>"
                    + "<td>\(HTML.escaped(Self.shareSummary(contents.shares)))</td></tr>\n"
            }
            body += "</tbody></table>\n"
        }
        return ConsolePage(
            title: ConsoleReader.label(user), viewer: choice(user), choices: choices(listed), body: body
        ).response()
    }

    // MARK: - A zone

    /// `/users/USER/DATABASE/ZONE` (`?owner=` in the shared database): the zone's shares with their
    /// participants and its records with their fields, as that user.
    func zonePage(user recordName: UserRecordName, database name: String, zone: String, owner: String?)
        async throws -> Response
    {
        let user = try await existingUser(recordName)
        guard let database = WireSpelling.database(name) else {
            throw ConsoleFailure(message: "No database \"\(name)\": private, shared or public.", status: .notFound)
        }
        if database == .shared, owner == nil {
            throw ConsoleFailure(
                message: "A shared zone is named with its owner: ?owner=RECORDNAME.", status: .notFound)
        }
        let zoneID = ZoneID(zoneName: zone, ownerRecordName: database == .shared ? owner ?? "" : defaultOwnerName)
        guard case .success? = try await store.lookupZones([zoneID], in: database, as: user.recordName).first else {
            throw ConsoleFailure(
                message:
                    "\(ConsoleReader.label(user)) has no zone \"\(zone)\" in the \(WireSpelling.database(database)) database.",
                status: .notFound)
        }
        let listed = try await reader.listedUsers()
        let contents = try await reader.contents(of: zoneID, in: database, as: user.recordName)
        let names = try await self.names(as: user, listed: listed)
        let shares = contents.shares.map { Self.owned($0, by: user.recordName, in: database) }
        var body =
            "<p>In the \(WireSpelling.database(database)) database of <a href=\"\(HTML.escaped(ConsolePage.userPath(user.recordName)))\">"
        body += "\(HTML.escaped(ConsoleReader.label(user)))</a>"
        if database == .shared { body += ", owned by \(HTML.escaped(Self.name(zoneID.ownerRecordName, names)))" }
        body += ". <a href=\"/access?as=\(HTML.escaped(ConsolePage.component(user.recordName)))&amp;zone="
        body += "\(HTML.escaped(ConsolePage.component(zone)))\">Access to this zone</a></p>\n"
        body += "<h2>Shares</h2>\n"
        if shares.isEmpty {
            body += "<p class=\"empty\">Nothing in this zone is shared.</p>\n"
        }
        for share in shares {
            body += shareSection(share, names: names)
        }
        body += "<h2>Records (\(contents.records.count))</h2>\n"
        body += recordTable(contents.records, shares: shares, names: names)
        return ConsolePage(
            title: "Zone \(zone)", viewer: choice(user), choices: choices(listed), body: body
        ).response()
    }

    private func shareSection(_ share: Share, names: [UserRecordName: String]) -> String {
        let scope = share.rootRecordName.map { "Records under \($0)" } ?? "The whole zone"
        var out = "<h3>\(HTML.escaped(scope))</h3>\n<dl class=\"fields\">"
        out += "<dt>title</dt><dd>\(HTML.escaped(share.title ?? "(none)"))</dd>"
        out += "<dt>owner</dt><dd>\(HTML.escaped(Self.name(share.ownerRecordName, names)))</dd>"
        out += "<dt>public permission</dt><dd>\(HTML.escaped(share.publicPermission.recipeName))</dd>"
        if let url = share.url { out += "<dt>URL</dt><dd><code>\(HTML.escaped(url))</code></dd>" }
        out += "</dl>\n"
        out +=
            "<table class=\"data participants\"><thead><tr><th>participant</th><th>permission</th><th>role</th>"
            + "<th>status</th><th>right now</th></tr></thead><tbody>\n"
        for participant in share.participants {
            let cell = AccessCell(user: participant.userRecordName, share: share)
            out +=
                "<tr><td>\(HTML.escaped(participant.email ?? Self.name(participant.userRecordName, names)))</td>"
                + "<td>\(HTML.escaped(participant.permission.recipeName))</td>"
                + "<td>\(HTML.escaped(participant.role.recipeName))</td>"
                + "<td>\(HTML.escaped(participant.acceptance.recipeName))</td>"
                + "<td class=\"\(HTML.escaped(AccessMatrixRenderer.cssClass(cell)))\">\(HTML.escaped(cell.text))</td>"
                + "</tr>\n"
        }
        return out + "</tbody></table>\n"
    }

    /// Records in hierarchy order (each parent before its children, indented), with fields and stamps.
    private func recordTable(_ records: [Record], shares: [Share], names: [UserRecordName: String]) -> String {
        guard !records.isEmpty else { return "<p class=\"empty\">No records that this user may see.</p>\n" }
        let present = Set(records.map(\.recordName))
        var children: [String: [Record]] = [:]
        var roots: [Record] = []
        for record in records {
            if let parent = record.parent, present.contains(parent), parent != record.recordName {
                children[parent, default: []].append(record)
            } else {
                roots.append(record)
            }
        }
        let sharedRoots = Set(shares.compactMap(\.rootRecordName))
        var out =
            "<table class=\"data records\"><thead><tr><th>record</th><th>type</th><th>fields</th><th>parent</th>"
            + "<th>created</th><th>modified</th></tr></thead><tbody>\n"
        var visited = Set<String>()
        func row(_ record: Record, depth: Int) {
            guard visited.insert(record.recordName).inserted else { return }
            let marker = sharedRoots.contains(record.recordName) ? " <span class=\"muted\">(shared)</span>" : ""
            var fields = "<dl class=\"fields\">"
            for key in record.fields.keys.sorted() {
                guard let value = record.fields[key] else { continue }
                fields += "<dt>\(HTML.escaped(key))</dt><dd>\(HTML.escaped(value.displayString))</dd>"
            }
            fields += "</dl>"
            out +=
                "<tr id=\"record-\(HTML.escaped(record.recordName))\"><td><span class=\"indent\" "
                + "style=\"padding-left: \(depth * 16)px\">\(depth > 0 ? "↳ " : "")\(HTML.escaped(record.recordName))</span>"
                + "\(marker)</td>"
                + "<td>\(HTML.escaped(record.recordType))</td><td>\(fields)</td>"
                + "<td>\(HTML.escaped(record.parent ?? ""))</td>"
                + "<td>\(Self.stamp(record.created, names))</td><td>\(Self.stamp(record.modified, names))</td></tr>\n"
            for child in (children[record.recordName] ?? []).sorted(by: { $0.recordName < $1.recordName }) {
                row(child, depth: depth + 1)
            }
        }
        for record in roots.sorted(by: { $0.recordName < $1.recordName }) { row(record, depth: 0) }
        return out + "</tbody></table>\n"
    }

    // MARK: - Access, graph, history

    /// `/access` (`?as=USER`, `?zone=ZONE`): the access matrix of every share, or of the shares a user sees.
    func accessPage(_ request: Request) async throws -> Response {
        let (viewer, listed) = try await viewerAndUsers(request)
        let zone = request.uri.queryParameters["zone"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        var body = """
            <p>Users (rows) × shares (columns). Each cell is the right the sharing rules give that user to what the \
            share covers now: owner, administrator, write, read or none; a pending invitation shows what it would \
            give once accepted, a removed participant is struck through.
            """
        if let zone {
            let all = "/access" + (viewer.map { "?as=" + ConsolePage.component($0.recordName) } ?? "")
            body += " Zone \(HTML.escaped(zone)) only; <a href=\"\(HTML.escaped(all))\">all zones</a>."
        }
        body += "</p>\n"
        if viewer == nil, listed == nil {
            body += "<p class=\"empty\">\(HTML.escaped(Self.cannotListUsers))</p>\n"
        } else {
            let snapshot = try await reader.snapshot(as: viewer, users: listed ?? [])
            body += AccessMatrixRenderer().htmlTable(AccessMatrix(snapshot).narrowed(toUser: nil, zone: zone))
        }
        return ConsolePage(
            title: "Access matrix", viewer: viewer.map(choice), choices: choices(listed), viewAsAction: "/access",
            body: body
        ).response()
    }

    /// `/graph` (`?as=USER`): the sharing graph drawn on the server as SVG, with its Mermaid and DOT text.
    func graphPage(_ request: Request) async throws -> Response {
        let (viewer, listed) = try await viewerAndUsers(request)
        var body =
            "<p>Owners → the zones and records they share → participants, each edge with the participant's "
            + "permission and status.</p>\n"
        if viewer == nil, listed == nil {
            body += "<p class=\"empty\">\(HTML.escaped(Self.cannotListUsers))</p>\n"
        } else {
            let snapshot = try await reader.snapshot(as: viewer, users: listed ?? [])
            let graph = SharingGraph(snapshot)
            let title = viewer.map { "Sharing as \(ConsoleReader.label($0))" } ?? "Sharing"
            // As one user the graph holds only what that user sees: a share shows to a participant once accepted.
            let empty =
                viewer.map {
                    "No shares that \(ConsoleReader.label($0)) sees: a share they were invited to shows here once they accept it."
                } ?? "No shares: nothing is shared with anyone."
            body += "<div class=\"graph\">\n\(SharingGraphSVG().svg(graph, title: title, empty: empty))</div>\n"
            body +=
                "<details><summary>Mermaid</summary><pre>\(HTML.escaped(SharingGraphRenderer().mermaid(graph)))</pre>"
                + "</details>\n<details><summary>Graphviz DOT</summary><pre>"
                + "\(HTML.escaped(SharingGraphRenderer().dot(graph, title: title)))</pre></details>\n"
        }
        return ConsolePage(
            title: "Sharing graph", viewer: viewer.map(choice), choices: choices(listed), viewAsAction: "/graph",
            body: body
        ).response()
    }

    /// `/history` (`?as=USER`): records, newest change first, with who created and changed them and when.
    func historyPage(_ request: Request) async throws -> Response {
        let (viewer, listed) = try await viewerAndUsers(request)
        var body = "<p>Records as the store holds them now, the most recently changed first"
        body += " (at most \(Self.historyLimit)). Deleted records are gone from the store and so from here.</p>\n"
        if viewer == nil, listed == nil {
            body += "<p class=\"empty\">\(HTML.escaped(Self.cannotListUsers))</p>\n"
        } else {
            let entries = try await reader.history(
                as: viewer?.recordName, users: listed ?? [], limit: Self.historyLimit)
            let names = try await self.names(as: viewer, listed: listed)
            if entries.isEmpty {
                body += "<p class=\"empty\">No records.</p>\n"
            } else {
                body +=
                    "<table class=\"data history\"><thead><tr><th>modified</th><th>record</th><th>type</th>"
                    + "<th>zone</th><th>database</th><th>created</th></tr></thead><tbody>\n"
                for entry in entries {
                    let path = ConsolePage.zonePath(entry.reader, entry.database, entry.zoneID)
                    var owner = ""
                    if entry.database == .private {
                        owner = " <span class=\"muted\">(\(HTML.escaped(Self.name(entry.reader, names))))</span>"
                    }
                    let record = entry.record
                    let link = HTML.escaped(path) + "#record-" + HTML.escaped(record.recordName)
                    body += "<tr><td>\(Self.stamp(record.modified, names))</td>"
                    body += "<td><a href=\"\(link)\">\(HTML.escaped(record.recordName))</a></td>"
                    body += "<td>\(HTML.escaped(record.recordType))</td>"
                    body += "<td>\(HTML.escaped(entry.zoneID.zoneName))\(owner)</td>"
                    body +=
                        "<td>\(WireSpelling.database(entry.database))</td><td>\(Self.stamp(record.created, names))</td></tr>\n"
                }
                body += "</tbody></table>\n"
            }
        }
        return ConsolePage(
            title: "Change history", viewer: viewer.map(choice), choices: choices(listed), viewAsAction: "/history",
            body: body
        ).response()
    }

    // MARK: - Helpers

    /// The user a page is viewed as (`?as=`; empty for everyone), and the users the store lists.
    private func viewerAndUsers(_ request: Request) async throws -> (User?, [User]?) {
        let listed = try await reader.listedUsers()
        guard let name = request.uri.queryParameters["as"], !name.isEmpty else { return (nil, listed) }
        return (try await existingUser(String(name)), listed)
    }

    /// The user with this record name, read as that user; a name the store does not know is a 404 page.
    private func existingUser(_ recordName: UserRecordName) async throws -> User {
        do {
            return try await store.currentUser(as: recordName)
        } catch let error as ShareError where error.code == .authenticationFailed || error.code == .notFound {
            throw ConsoleFailure(message: "No user \(recordName) in this store.", status: .notFound)
        }
    }

    /// The names the page may show: every user's for the whole store; as a user, only the names the store
    /// showed that user (itself, and the owners and participants of the shares it sees).
    private func names(as viewer: User?, listed: [User]?) async throws -> [UserRecordName: String] {
        var names: [UserRecordName: String] = [:]
        guard let viewer else {
            for user in listed ?? [] { names[user.recordName] = ConsoleReader.label(user) }
            return names
        }
        for user in try await reader.snapshot(as: viewer, users: []).users {
            names[user.recordName] = user.email ?? user.name ?? user.recordName
        }
        names[viewer.recordName] = ConsoleReader.label(viewer)
        return names
    }

    private static func name(_ recordName: UserRecordName, _ names: [UserRecordName: String]) -> String {
        names[recordName] ?? recordName
    }

    /// `alice@example.com, 2024-05-01 09:00:00 UTC`, escaped.
    private static func stamp(_ stamp: Stamp?, _ names: [UserRecordName: String]) -> String {
        guard let stamp else { return "<span class=\"muted\">unknown</span>" }
        return
            "\(HTML.escaped(name(stamp.userRecordName, names)))<br><span class=\"muted\">"
            + "\(ConsolePage.time(stamp.timestamp))</span>"
    }

    /// A share as its owner's own database names it carries the placeholder owner: the report names the owner.
    private static func owned(_ share: Share, by user: UserRecordName, in database: DatabaseScope) -> Share {
        guard database == .private else { return share }
        var share = share
        share.zoneID = share.zoneID.resolvingOwner(to: user)
        if share.ownerRecordName == defaultOwnerName { share.ownerRecordName = user }
        return share
    }

    private func choice(_ user: User) -> ConsolePage.Choice {
        ConsolePage.Choice(recordName: user.recordName, label: ConsoleReader.label(user))
    }

    private func choices(_ listed: [User]?) -> [ConsolePage.Choice] {
        (listed ?? []).map(choice)
    }

    private static func databaseTitle(_ database: DatabaseScope) -> String {
        switch database {
        case .private: "Private database"
        case .shared: "Shared database"
        case .public: "Public database"
        }
    }

    private static func emptyDatabase(_ database: DatabaseScope) -> String {
        switch database {
        case .private: "No zones."
        case .shared: "Nothing shared with this user and accepted."
        case .public: "No zones."
        }
    }

    /// `zone-wide share “Family lists”`, `1 record share`, or `not shared`.
    private static func shareSummary(_ shares: [Share]) -> String {
        guard !shares.isEmpty else { return "not shared" }
        return shares.map { share in
            let kind = share.rootRecordName.map { "shares \($0)" } ?? "shared as a whole"
            return share.title.map { "\(kind) (“\($0)”)" } ?? kind
        }.joined(separator: "; ")
    }
}
