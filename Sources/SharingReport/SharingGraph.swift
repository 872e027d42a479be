import ShareKit

/// Owners → what they share (zones, and hierarchy roots inside zones) → participants, as nodes and edges.
///
/// Drawn from a snapshot; with a `before` snapshot (a plan's), each edge also says whether it is new,
/// changed or gone, so a graph of a plan shows what the plan changes.
public struct SharingGraph: Sendable, Hashable {
    public enum NodeKind: String, Sendable, Hashable {
        case owner, zone, root, participant
    }

    public struct Node: Sendable, Hashable {
        /// Stable: `user:RECORDNAME`, `zone:OWNER/ZONE`, `root:OWNER/ZONE/RECORD`.
        public var id: String
        public var kind: NodeKind
        public var label: String
        /// A second line: a share's title and public permission, a user's email address.
        public var detail: String?
    }

    /// What an edge's change is, against the before snapshot.
    public enum Change: String, Sendable, Hashable {
        case unchanged, added, changed, removed
    }

    public struct Edge: Sendable, Hashable {
        public var from: String
        public var to: String
        /// `owns`, `holds`, or a participant's `read-write, accepted` (`administrator, pending`).
        public var label: String
        public var change: Change
    }

    public var nodes: [Node]
    public var edges: [Edge]

    /// The graph of `snapshot`; with `before`, edges are marked against it and edges only `before` has are
    /// kept as `removed`. `onlyChanged` keeps only the shares a change touches.
    public init(_ snapshot: SharingSnapshot, before: SharingSnapshot? = nil, onlyChanged: Bool = false) {
        var nodes: [Node] = []
        var edges: [Edge] = []
        var seen = Set<String>()
        let users = Dictionary(
            (snapshot.users + (before?.users ?? [])).map { ($0.recordName, $0) }, uniquingKeysWith: { a, _ in a })
        func label(_ user: UserRecordName) -> String { users[user]?.label ?? user }
        func add(_ node: Node) { if seen.insert(node.id).inserted { nodes.append(node) } }
        // Edges by their ends: a scan of the edges for each was quadratic in the participants of all shares.
        var edgeEnds = Set<[String]>()
        func addEdge(_ edge: Edge) {
            if edgeEnds.insert([edge.from, edge.to]).inserted { edges.append(edge) }
        }
        let afterShares = Dictionary(
            snapshot.shares.map { (AccessMatrix.columnID(of: $0), $0) }, uniquingKeysWith: { a, _ in a })
        let beforeShares = Dictionary(
            (before?.shares ?? []).map { (AccessMatrix.columnID(of: $0), $0) }, uniquingKeysWith: { a, _ in a })
        var order = snapshot.shares.map { AccessMatrix.columnID(of: $0) }
        for share in before?.shares ?? [] where afterShares[AccessMatrix.columnID(of: share)] == nil {
            order.append(AccessMatrix.columnID(of: share))
        }
        for id in order {
            let now = afterShares[id]
            let then = beforeShares[id]
            guard let share = now ?? then else { continue }
            if onlyChanged, before != nil, Self.same(now, then) { continue }
            let owner = share.zoneID.ownerRecordName
            let ownerID = "user:\(owner)"
            add(Node(id: ownerID, kind: .owner, label: label(owner), detail: users[owner]?.email))
            let zoneID = "zone:\(owner)/\(share.zoneID.zoneName)"
            add(
                Node(
                    id: zoneID, kind: .zone, label: share.zoneID.zoneName,
                    detail: share.isZoneWide ? Self.shareDetail(share) : nil))
            let shareChange: Change =
                before == nil ? .unchanged : (then == nil ? .added : (now == nil ? .removed : .unchanged))
            addEdge(Edge(from: ownerID, to: zoneID, label: "owns", change: share.isZoneWide ? shareChange : .unchanged))
            var sharedID = zoneID
            if let root = share.rootRecordName {
                sharedID = "root:\(owner)/\(share.zoneID.zoneName)/\(root)"
                add(Node(id: sharedID, kind: .root, label: root, detail: Self.shareDetail(share)))
                addEdge(Edge(from: zoneID, to: sharedID, label: "shares", change: shareChange))
            }
            var participants: [UserRecordName] = (now ?? share).participants.filter { $0.role != .owner }.map(
                \.userRecordName)
            for old in then?.participants ?? [] where old.role != .owner && !participants.contains(old.userRecordName) {
                participants.append(old.userRecordName)
            }
            for user in participants {
                let new = now?.participant(user)
                let old = then?.participant(user)
                guard let shown = new ?? old else { continue }
                let userID = "user:\(user)"
                add(Node(id: userID, kind: .participant, label: label(user), detail: users[user]?.email))
                let change: Change
                if before == nil {
                    change = .unchanged
                } else if let old, let new {
                    change = Self.sameParticipant(old, new) ? .unchanged : .changed
                } else {
                    change = old == nil ? .added : .removed
                }
                addEdge(Edge(from: sharedID, to: userID, label: Self.edgeLabel(shown), change: change))
            }
        }
        self.nodes = nodes
        self.edges = edges
    }

    /// `read-write, accepted`; an administrator's `administrator, pending`.
    static func edgeLabel(_ participant: Participant) -> String {
        let right =
            participant.role == .administrator
            ? "administrator"
            : (participant.role == .publicUser
                ? "public \(participant.permission.recipeName)" : participant.permission.recipeName)
        return "\(right), \(participant.acceptance.recipeName)"
    }

    /// A share's title and, when it has one, its public permission.
    static func shareDetail(_ share: Share) -> String? {
        var parts: [String] = []
        if let title = share.title, !title.isEmpty { parts.append("“\(title)”") }
        if share.publicPermission != .none { parts.append("public: \(share.publicPermission.recipeName)") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    private static func sameParticipant(_ a: Participant, _ b: Participant) -> Bool {
        a.permission == b.permission && a.role == b.role && a.acceptance == b.acceptance
    }

    private static func same(_ a: Share?, _ b: Share?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        guard a.publicPermission == b.publicPermission, a.title == b.title,
            a.participants.count == b.participants.count
        else { return false }
        return a.participants.allSatisfy { p in b.participant(p.userRecordName).map { sameParticipant(p, $0) } ?? false
        }
    }
}
