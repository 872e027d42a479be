import Foundation
import ShareKit
import SharingReport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The sharing graph drawn as SVG on the server: a well-formed picture with a box for every node in its
/// column, a line for every edge with its label, colours by change, and names kept as text.
@Suite struct SharingGraphSVGTests {
    @Test func everyNodeAndEdgeIsDrawnInItsColumn() async throws {
        let fixture = try await SharingFixture()
        let graph = SharingGraph(try await fixture.snapshot())
        let svg = SharingGraphSVG().svg(graph, title: "Sharing")
        let parsed = try SVGElements(svg)

        #expect(parsed.count("g") == graph.nodes.count)
        #expect(parsed.paths(withClassPrefix: "edge") == graph.edges.count)
        for heading in ["owners", "zones", "shared records", "participants"] {
            #expect(parsed.texts.contains(heading), "no column \(heading)")
        }
        for label in ["alice", "bob", "carol", "dana", "frank", "FamilyLists", "Trips", "italy", "Board"] {
            #expect(parsed.texts.contains(label), "no node \(label): \(parsed.texts)")
        }
        #expect(parsed.texts.contains("administrator, accepted"))
        #expect(parsed.texts.contains("read-only, pending"))
        // Columns left to right: owners, zones, shared records, participants.
        let x = { (label: String) in parsed.x(ofText: label) ?? -1 }
        #expect(x("alice") < x("FamilyLists"))
        #expect(x("FamilyLists") < x("italy"))
        #expect(x("italy") < x("frank"))
    }

    @Test func changesAreColouredAndGoneEdgesDashed() async throws {
        let fixture = try await SharingFixture()
        let after = try await fixture.snapshot()
        var before = after
        before.shares = before.shares.map { share in
            var share = share
            share.participants.removeAll { $0.userRecordName == fixture.id("carol") }
            if share.rootRecordName == "italy" {
                share.participants.append(
                    Participant(userRecordName: fixture.id("dana"), permission: .readOnly, acceptance: .accepted))
            }
            return share
        }
        let svg = SharingGraphSVG().svg(SharingGraph(after, before: before), title: "Plan")
        #expect(svg.contains("class=\"edge added\""))
        #expect(svg.contains("class=\"edge removed\""))
        #expect(svg.contains("stroke=\"#1a7f37\""), "an added edge is not green")
        #expect(svg.contains("stroke=\"#cf222e\" stroke-width=\"2.5\" stroke-dasharray=\"6 4\""))
        #expect(svg.contains("+ read-only, pending"))
        #expect(svg.contains("- read-only, accepted"))
    }

    @Test func namesAreEscapedAndLongOnesCutWithTheWholeInTheTooltip() throws {
        let owner = "_owner"
        let guest = "_guest"
        var share = Share.zoneWide(ZoneID(zoneName: "Z<one>&\"", ownerRecordName: owner), title: "T</text><script>")
        share.ownerRecordName = owner
        share.participants = [Participant(userRecordName: guest, permission: .readWrite, acceptance: .accepted)]
        let long = String(repeating: "very-long-name-", count: 6) + "end@example.com"
        let snapshot = SharingSnapshot(
            users: [
                SharingUser(recordName: owner, email: "<b>o</b>@example.com"),
                SharingUser(recordName: guest, email: long),
            ], shares: [share])
        let svg = SharingGraphSVG().svg(SharingGraph(snapshot), title: "A <title>")
        let parsed = try SVGElements(svg)

        #expect(!svg.contains("<script"))
        #expect(!svg.contains("<b>"))
        #expect(svg.contains("Z&lt;one&gt;&amp;&quot;"))
        #expect(parsed.titles.contains("A <title>"))
        #expect(parsed.texts.contains("<b>o</b>@example.com"))
        #expect(parsed.titles.contains(long), "the tooltip does not hold the whole name")
        #expect(!parsed.texts.contains(long), "a long name is drawn past its box")
        #expect(parsed.texts.contains { $0.hasPrefix("very-long-name-") && $0.hasSuffix("…") })
    }

    /// At the middle of its curve a label lay across the edges leaving a column's gap together (a pending
    /// participant's label over another participant's edge); it sits just before the box its edge points at.
    @Test func eachLabelSitsBeforeTheBoxItsEdgePointsAt() async throws {
        let fixture = try await SharingFixture()
        let graph = SharingGraph(try await fixture.snapshot())
        let svg = SharingGraphSVG().svg(graph, title: "Sharing")
        func numbers(_ pattern: String) throws -> [(Double, Double)] {
            let regex = try Regex(pattern)
            return svg.matches(of: regex).compactMap { match in
                guard let x = match.output[1].substring.flatMap({ Double($0) }),
                    let y = match.output[2].substring.flatMap({ Double($0) })
                else { return nil }
                return (x, y)
            }
        }
        let boxes = try numbers(#"<g class="node [a-z]+"><title>[^<]*</title><rect x="([0-9.]+)" y="([0-9.]+)""#)
        let labels = try numbers(#"<text class="edge-label" x="([0-9.]+)" y="([0-9.]+)""#)
        #expect(labels.count == graph.edges.count)
        let height = SharingGraphSVG().nodeHeight
        for (x, y) in labels {
            let before = boxes.contains { box in
                box.0 - x > 0 && box.0 - x <= 12 && abs(y - (box.1 + height / 2)) <= 15 + 13 * 3
            }
            #expect(before, "the label at \(x), \(y) is not just before a box: \(boxes)")
        }
    }

    @Test func anEmptyGraphSaysSo() throws {
        let svg = SharingGraphSVG().svg(SharingGraph(SharingSnapshot(users: [], shares: [])), title: "Nothing")
        let parsed = try SVGElements(svg)
        #expect(parsed.texts == ["No shares: nothing is shared with anyone."])
    }
}

/// An SVG document read with an XML parser: a test of well-formedness, and what it draws.
private final class SVGElements: NSObject, XMLParserDelegate {
    private(set) var elements: [(name: String, attributes: [String: String])] = []
    private(set) var texts: [String] = []
    private(set) var titles: [String] = []
    private var textX: [String: String] = [:]
    private var current = ""
    private var open: [(String, [String: String])] = []

    init(_ svg: String) throws {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        guard parser.parse() else {
            throw SVGError(description: "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")\n\(svg)")
        }
    }

    func count(_ name: String) -> Int { elements.filter { $0.name == name }.count }

    func paths(withClassPrefix prefix: String) -> Int {
        elements.filter { $0.name == "path" && ($0.attributes["class"] ?? "").hasPrefix(prefix) }.count
    }

    /// The x of the first `<text>` that reads `text`.
    func x(ofText text: String) -> Double? { textX[text].flatMap(Double.init) }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements.append((name, attributes))
        open.append((name, attributes))
        current = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let attributes = open.popLast()?.1 ?? [:]
        if name == "text" {
            texts.append(current)
            if textX[current] == nil { textX[current] = attributes["x"] }
        }
        if name == "title" { titles.append(current) }
        current = ""
    }
}

private struct SVGError: Error, CustomStringConvertible {
    var description: String
}
