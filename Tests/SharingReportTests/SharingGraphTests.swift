import Foundation
import ShareKit
import SharelaneTestSupport
import SharingReport
import Testing

@Suite struct SharingGraphTests {
    let golden = GoldenFile(besides: #filePath)

    @Test func theGraphLinksOwnersZonesRootsAndParticipants() async throws {
        let graph = SharingGraph(try await SharingFixture().snapshot())
        let labels = Dictionary(graph.nodes.map { ($0.id, $0.label) }, uniquingKeysWith: { a, _ in a })
        let edges = graph.edges.map { "\(labels[$0.from]!) -[\($0.label)]-> \(labels[$0.to]!)" }
        #expect(edges.contains("alice -[owns]-> FamilyLists"))
        #expect(edges.contains("FamilyLists -[administrator, accepted]-> dana"))
        #expect(edges.contains("FamilyLists -[read-only, pending]-> carol"))
        #expect(edges.contains("FamilyLists -[read-only, removed]-> erin"))
        #expect(edges.contains("Trips -[shares]-> italy"))
        #expect(edges.contains("italy -[read-only, accepted]-> bob"))
        #expect(edges.contains("Board -[public read-only, accepted]-> frank"))
        #expect(graph.nodes.first { $0.label == "Board" }?.detail == "public: read-only")
    }

    @Test func dotAndMermaidReadAsGolden() async throws {
        let graph = SharingGraph(try await SharingFixture().snapshot())
        try golden.check(SharingGraphRenderer().dot(graph, title: "Sharing in memory:"), against: "graph.dot")
        try golden.check(SharingGraphRenderer().mermaid(graph), against: "graph.mmd")
    }

    @Test func aGraphAgainstBeforeMarksWhatChanged() async throws {
        let fixture = try await SharingFixture()
        let before = try await fixture.snapshot()
        var after = before
        let lists = after.shares.firstIndex { $0.zoneID.zoneName == "FamilyLists" }!
        after.shares[lists].participants.removeAll { $0.userRecordName == fixture.users["carol"]!.recordName }
        after.shares[lists].participants[0].permission = .readOnly
        after.shares[lists].participants[0].role = .privateUser
        let graph = SharingGraph(after, before: before, onlyChanged: true)
        #expect(Set(graph.nodes.filter { $0.kind == .zone }.map(\.label)) == ["FamilyLists"])
        var changes: [String: SharingGraph.Change] = [:]
        for edge in graph.edges {
            if let target = graph.nodes.first(where: { $0.id == edge.to }) { changes[target.label] = edge.change }
        }
        #expect(changes["carol"] == .removed)
        #expect(changes["dana"] == .changed)
        #expect(changes["bob"] == .unchanged)
        let mermaid = SharingGraphRenderer().mermaid(graph)
        #expect(mermaid.contains("-.->|\"- read-only, pending\"|"))
        #expect(mermaid.contains("linkStyle"))
    }

    @Test func namesCannotBreakTheDiagrams() {
        let zone = ZoneID(zoneName: "A\"]|x<script>#", ownerRecordName: "_o")
        let share = Share(recordName: zoneShareRecordName, zoneID: zone, ownerRecordName: "_o")
        let graph = SharingGraph(
            SharingSnapshot(users: [SharingUser(recordName: "_o", handle: "o\"\n-->")], shares: [share]))
        let mermaid = SharingGraphRenderer().mermaid(graph)
        #expect(!mermaid.contains("<script>"))
        #expect(mermaid.contains("A#quot;]#124;x#lt;script#gt;#35;"))
        let dot = SharingGraphRenderer().dot(graph, title: "t")
        #expect(dot.contains(#"label="o\"\\n-->""#))
        #expect(dot.split(separator: "\n").count == 11)
    }
}
