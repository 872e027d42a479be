import Foundation

/// Draws a sharing graph as an SVG picture, with no JavaScript and no Graphviz: for pages that must work
/// on their own (the console of `sharelane serve`).
///
/// A layered layout, one column a kind of node: owners | zones | shared records (hierarchy roots) |
/// participants, each column in the graph's order and centred on the tallest; columns with no node are left
/// out. Edges are curves from the right side of a node to the left side of the next, labelled just before
/// the node they point at, above their end; new edges are green, changed ones orange, gone ones red and dashed (as in the DOT rendering).
/// Every name is escaped; a name too long for its box is cut with `…` and shown whole in the box's tooltip.
public struct SharingGraphSVG: Sendable {
    /// The width of a node's box; columns are `nodeWidth + columnGap` apart.
    public var nodeWidth: Double = 180
    public var nodeHeight: Double = 44
    /// Room between columns for the edges and their labels.
    public var columnGap: Double = 140
    public var rowGap: Double = 22

    public init() {}

    /// How many characters of a label fit in a box (at 13 px, about 7 px a character).
    var labelCharacters: Int { Int((nodeWidth - 16) / 7) }

    /// The picture as an `<svg>` element (with `role="img"` and a `<title>`), to put in a page or save as a
    /// `.svg` file. An empty graph draws `empty`: "No shares" by default; as one user, what that user sees.
    public func svg(
        _ graph: SharingGraph, title: String, empty: String = "No shares: nothing is shared with anyone."
    ) -> String {
        let margin = 20.0
        let headerHeight = 36.0
        guard !graph.nodes.isEmpty else {
            // About 7 px a character at 14 px.
            let width = Self.number(max(320, 40 + Double(empty.count) * 7))
            return """
                <svg xmlns="http://www.w3.org/2000/svg" class="sharing-graph" role="img" width="\(width)" height="80" \
                viewBox="0 0 \(width) 80"><title>\(HTML.escaped(title))</title>\
                <text x="20" y="45" font-family="system-ui, sans-serif" font-size="14" fill="#656d76">\
                \(HTML.escaped(empty))</text></svg>

                """
        }
        let kinds: [SharingGraph.NodeKind] = [.owner, .zone, .root, .participant]
        let columns = kinds.map { kind in graph.nodes.filter { $0.kind == kind } }.filter { !$0.isEmpty }
        let tallest = columns.map(\.count).max() ?? 1
        let bodyHeight = Double(tallest) * nodeHeight + Double(tallest - 1) * rowGap
        let width = margin * 2 + Double(columns.count) * nodeWidth + Double(columns.count - 1) * columnGap
        // Room below the last row for an edge routed under it.
        let height = margin * 2 + headerHeight + bodyHeight + rowGap
        var boxes: [String: (x: Double, y: Double, column: Int)] = [:]
        var tops: [[Double]] = []
        for (index, column) in columns.enumerated() {
            let x = margin + Double(index) * (nodeWidth + columnGap)
            let columnHeight = Double(column.count) * nodeHeight + Double(column.count - 1) * rowGap
            let top = margin + headerHeight + (bodyHeight - columnHeight) / 2
            tops.append(column.indices.map { top + Double($0) * (nodeHeight + rowGap) })
            for (row, node) in column.enumerated() {
                boxes[node.id] = (x, top + Double(row) * (nodeHeight + rowGap), index)
            }
        }
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" class="sharing-graph" role="img" width="\(Self.number(width))" \
            height="\(Self.number(height))" viewBox="0 0 \(Self.number(width)) \(Self.number(height))" \
            font-family="system-ui, sans-serif">
            <title>\(HTML.escaped(title))</title>

            """
        for (index, column) in columns.enumerated() {
            let x = margin + Double(index) * (nodeWidth + columnGap) + nodeWidth / 2
            out +=
                "<text class=\"column\" x=\"\(Self.number(x))\" y=\"\(Self.number(margin + 12))\" "
                + "text-anchor=\"middle\" font-size=\"12\" fill=\"#656d76\">\(Self.heading(column[0].kind))</text>\n"
        }
        // Edges first, so that boxes are drawn over their ends; labels last, over everything.
        var labels = ""
        // Labels of edges into one node are stacked above each other.
        var labelsInto: [String: Int] = [:]
        var router = GapRouter(tops: tops, nodeHeight: nodeHeight, rowGap: rowGap)
        for edge in graph.edges {
            guard let from = boxes[edge.from], let to = boxes[edge.to] else { continue }
            let end = (x: to.x, y: to.y + nodeHeight / 2)
            var point = (x: from.x + nodeWidth, y: from.y + nodeHeight / 2)
            var d = "M \(Self.number(point.x)) \(Self.number(point.y))"
            // An edge that skips a column (a zone's participant, past the shared records) passes through a gap
            // between that column's boxes, never behind one: behind a box it would seem to leave from it.
            if to.column > from.column + 1 {
                for skipped in (from.column + 1)..<to.column {
                    let left = margin + Double(skipped) * (nodeWidth + columnGap)
                    let straight = point.y + (end.y - point.y) * (left + nodeWidth / 2 - point.x) / (end.x - point.x)
                    let y = router.gap(in: skipped, near: straight)
                    d +=
                        " " + Self.curve(from: point, to: (left, y))
                        + " L \(Self.number(left + nodeWidth)) \(Self.number(y))"
                    point = (left + nodeWidth, y)
                }
            }
            d += " " + Self.curve(from: point, to: end)
            let colour = Self.colour(edge.change)
            let dash = edge.change == .removed ? " stroke-dasharray=\"6 4\"" : ""
            let widthAttribute = edge.change == .unchanged ? "1.5" : "2.5"
            out +=
                "<path class=\"edge \(edge.change.rawValue)\" d=\"\(d)\" fill=\"none\" stroke=\"\(colour)\" "
                + "stroke-width=\"\(widthAttribute)\"\(dash) marker-end=\"url(#arrow-\(edge.change.rawValue))\"/>\n"
            // The label sits just before the node the edge points at, above the edge's end, where edges into
            // other nodes do not run: at the middle of the curve it lay across the edges that leave a column's
            // gap together. Labels of edges into one node stack upwards.
            let stacked = Double(labelsInto[edge.to, default: 0])
            labelsInto[edge.to, default: 0] += 1
            let labelY = end.y - 6 - stacked * 13
            labels +=
                "<text class=\"edge-label\" x=\"\(Self.number(end.x - 10))\" "
                + "y=\"\(Self.number(labelY))\" text-anchor=\"end\" font-size=\"11\" "
                + "fill=\"\(colour)\" stroke=\"#ffffff\" stroke-width=\"4\" paint-order=\"stroke\">"
                + "\(HTML.escaped(SharingGraphRenderer.marked(edge)))</text>\n"
        }
        out += "<defs>"
        for change in [SharingGraph.Change.unchanged, .added, .changed, .removed] {
            out +=
                "<marker id=\"arrow-\(change.rawValue)\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
                + "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
                + "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"\(Self.colour(change))\"/></marker>"
        }
        out += "</defs>\n"
        for node in graph.nodes {
            guard let box = boxes[node.id] else { continue }
            out += self.node(node, x: box.x, y: box.y)
        }
        out += labels
        out += "</svg>\n"
        return out
    }

    /// A node: its box (shape and fill by kind), its label and, smaller, its detail; the whole text as the
    /// tooltip.
    private func node(_ node: SharingGraph.Node, x: Double, y: Double) -> String {
        let (fill, stroke, radius): (String, String, Double) =
            switch node.kind {
            case .owner: ("#ddf4ff", "#54aeff", 10)
            case .zone: ("#f6f8fa", "#8c959f", 2)
            case .root: ("#fff8c5", "#d4a72c", 2)
            case .participant: ("#ffffff", "#8c959f", 22)
            }
        // A user known only by email address has it as label and detail: once is enough.
        let detail = node.detail == node.label ? nil : node.detail
        let whole = ([node.label] + (detail.map { [$0] } ?? [])).joined(separator: "\n")
        let centre = x + nodeWidth / 2
        var out =
            "<g class=\"node \(node.kind.rawValue)\"><title>\(HTML.escaped(whole))</title>"
            + "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(nodeWidth))\" "
            + "height=\"\(Self.number(nodeHeight))\" rx=\"\(Self.number(radius))\" fill=\"\(fill)\" "
            + "stroke=\"\(stroke)\"/>"
        if let detail {
            out +=
                "<text x=\"\(Self.number(centre))\" y=\"\(Self.number(y + 18))\" text-anchor=\"middle\" "
                + "font-size=\"13\" font-weight=\"600\" fill=\"#1f2328\">\(HTML.escaped(cut(node.label)))</text>"
                + "<text x=\"\(Self.number(centre))\" y=\"\(Self.number(y + 34))\" text-anchor=\"middle\" "
                + "font-size=\"11\" fill=\"#656d76\">\(HTML.escaped(cut(detail, characters: labelCharacters + 4)))"
                + "</text>"
        } else {
            out +=
                "<text x=\"\(Self.number(centre))\" y=\"\(Self.number(y + nodeHeight / 2 + 5))\" "
                + "text-anchor=\"middle\" font-size=\"13\" font-weight=\"600\" fill=\"#1f2328\">"
                + "\(HTML.escaped(cut(node.label)))</text>"
        }
        return out + "</g>\n"
    }

    /// A curve leaving `start` and reaching `end` horizontally.
    static func curve(from start: (x: Double, y: Double), to end: (x: Double, y: Double)) -> String {
        let middle = Self.number((start.x + end.x) / 2)
        return
            "C \(middle) \(Self.number(start.y)), \(middle) \(Self.number(end.y)), \(Self.number(end.x)) "
            + "\(Self.number(end.y))"
    }

    /// Chooses where an edge crosses a column it skips: the gap between two boxes (or above the first, below the
    /// last) nearest to where a straight line would cross, spreading edges that share a gap a few pixels apart.
    struct GapRouter {
        let tops: [[Double]]
        let nodeHeight: Double
        let rowGap: Double
        private var used: [String: Int] = [:]

        init(tops: [[Double]], nodeHeight: Double, rowGap: Double) {
            self.tops = tops
            self.nodeHeight = nodeHeight
            self.rowGap = rowGap
        }

        mutating func gap(in column: Int, near y: Double) -> Double {
            let tops = self.tops[column]
            guard let first = tops.first, let last = tops.last else { return y }
            var centres = [first - rowGap / 2]
            for index in tops.indices.dropFirst() { centres.append((tops[index - 1] + nodeHeight + tops[index]) / 2) }
            centres.append(last + nodeHeight + rowGap / 2)
            let best = centres.indices.min { abs(centres[$0] - y) < abs(centres[$1] - y) } ?? 0
            let key = "\(column)/\(best)"
            let count = used[key, default: 0]
            used[key] = count + 1
            let step = 5.0
            if best == 0 { return centres[best] - Double(count) * step }
            if best == centres.count - 1 { return centres[best] + Double(count) * step }
            return centres[best] + [0, -step, step][count % 3]
        }
    }

    /// `text` cut to fit a box, with `…` where it was cut.
    func cut(_ text: String, characters: Int? = nil) -> String {
        let limit = characters ?? labelCharacters
        guard text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }

    /// The heading over a column of nodes of `kind`.
    static func heading(_ kind: SharingGraph.NodeKind) -> String {
        switch kind {
        case .owner: "owners"
        case .zone: "zones"
        case .root: "shared records"
        case .participant: "participants"
        }
    }

    /// An edge's colour by its change, the colours of the DOT rendering.
    static func colour(_ change: SharingGraph.Change) -> String {
        switch change {
        case .unchanged: "#57606a"
        case .added: "#1a7f37"
        case .changed: "#bc4c00"
        case .removed: "#cf222e"
        }
    }

    /// A coordinate with at most one decimal, so the text stays the same across platforms.
    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded)
    }
}
