import ShareKit

/// Draws a sharing graph as Graphviz DOT or as a Mermaid flowchart (which GitHub and GitLab render in
/// markdown).
public struct SharingGraphRenderer: Sendable {
    public init() {}

    // MARK: - DOT

    /// A `digraph` laid out left to right: owners as boxes, zones as folders, hierarchy roots as notes,
    /// participants as ellipses; edges labelled by permission and status, new edges green, changed ones
    /// orange, gone ones red and dashed.
    public func dot(_ graph: SharingGraph, title: String) -> String {
        var lines = [
            "digraph sharing {",
            "  label=\(Self.dotQuoted(title));",
            "  labelloc=t;",
            "  fontname=\"Helvetica\";",
            "  rankdir=LR;",
            "  node [fontname=\"Helvetica\", fontsize=11];",
            "  edge [fontname=\"Helvetica\", fontsize=9];",
        ]
        if graph.nodes.isEmpty {
            lines.append("  empty [label=\"No shares\", shape=plaintext];")
        }
        // Nodes are numbered in the graph's order: the text stays the same for the same shares, whatever the
        // users' record names.
        var ids: [String: String] = [:]
        for (index, node) in graph.nodes.enumerated() { ids[node.id] = "n\(index)" }
        for (index, node) in graph.nodes.enumerated() {
            // Each part escaped on its own: a newline inside a name stays visible as `\n`, not a line break.
            let label = ([node.label] + (node.detail.map { [$0] } ?? [])).map { DisplayText.escaped($0) }
                .joined(separator: "\n")
            let shape: String
            switch node.kind {
            case .owner: shape = "shape=box, style=\"rounded,filled\", fillcolor=\"#ddf4ff\""
            case .zone: shape = "shape=folder, style=filled, fillcolor=\"#f6f8fa\""
            case .root: shape = "shape=note, style=filled, fillcolor=\"#fff8c5\""
            case .participant: shape = "shape=ellipse"
            }
            lines.append("  n\(index) [label=\(Self.dotQuoted(label)), \(shape)];")
        }
        for edge in graph.edges {
            guard let from = ids[edge.from], let to = ids[edge.to] else { continue }
            var attributes = ["label=\(Self.dotQuoted(Self.marked(edge)))"]
            switch edge.change {
            case .unchanged: break
            case .added: attributes.append("color=\"#1a7f37\", fontcolor=\"#1a7f37\", penwidth=2")
            case .changed: attributes.append("color=\"#bc4c00\", fontcolor=\"#bc4c00\", penwidth=2")
            case .removed: attributes.append("color=\"#cf222e\", fontcolor=\"#cf222e\", style=dashed")
            }
            lines.append(
                "  \(from) -> \(to) [\(attributes.joined(separator: ", "))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A DOT string literal: quotes and backslashes escaped, newlines as `\n`, control characters escaped.
    static func dotQuoted(_ text: String) -> String {
        let escaped = DisplayText.escaped(text, keepingNewlines: true).replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }

    /// The edge's label with its change marked: `+ read-only, pending`, `- read-write, accepted`.
    static func marked(_ edge: SharingGraph.Edge) -> String {
        switch edge.change {
        case .unchanged: edge.label
        case .added: "+ \(edge.label)"
        case .changed: "~ \(edge.label)"
        case .removed: "- \(edge.label)"
        }
    }

    // MARK: - Mermaid

    /// A `flowchart LR`: nodes are numbered (`n0`, `n1`, …) so no name can break the syntax; labels are
    /// quoted with Mermaid's entity codes. Gone edges are dotted; new, changed and gone edges are coloured by
    /// `linkStyle`.
    public func mermaid(_ graph: SharingGraph) -> String {
        var lines = ["flowchart LR"]
        var ids: [String: String] = [:]
        for (index, node) in graph.nodes.enumerated() { ids[node.id] = "n\(index)" }
        if graph.nodes.isEmpty { lines.append("  empty[\"No shares\"]") }
        for (index, node) in graph.nodes.enumerated() {
            let text = Self.mermaidText(node.label) + (node.detail.map { "<br/>" + Self.mermaidText($0) } ?? "")
            let id = "n\(index)"
            switch node.kind {
            case .owner: lines.append("  \(id)([\"\(text)\"])")
            case .zone: lines.append("  \(id)[(\"\(text)\")]")
            case .root: lines.append("  \(id)[/\"\(text)\"/]")
            case .participant: lines.append("  \(id)[\"\(text)\"]")
            }
        }
        var styles: [String] = []
        for (index, edge) in graph.edges.enumerated() {
            guard let from = ids[edge.from], let to = ids[edge.to] else { continue }
            let arrow = edge.change == .removed ? "-.->" : "-->"
            lines.append("  \(from) \(arrow)|\"\(Self.mermaidText(Self.marked(edge)))\"| \(to)")
            switch edge.change {
            case .unchanged: break
            case .added: styles.append("  linkStyle \(index) stroke:#1a7f37,stroke-width:2px")
            case .changed: styles.append("  linkStyle \(index) stroke:#bc4c00,stroke-width:2px")
            case .removed: styles.append("  linkStyle \(index) stroke:#cf222e")
            }
        }
        return (lines + styles).joined(separator: "\n") + "\n"
    }

    /// Text inside a quoted Mermaid label: quotes, angle brackets, ampersands and pipes as entity codes, control
    /// characters escaped, so a name cannot end the label or the diagram.
    static func mermaidText(_ text: String) -> String {
        var out = ""
        for character in DisplayText.escaped(text) {
            switch character {
            case "\"": out += "#quot;"
            case "<": out += "#lt;"
            case ">": out += "#gt;"
            case "&": out += "#amp;"
            case "|": out += "#124;"
            case "`": out += "#96;"
            case "#": out += "#35;"
            default: out.append(character)
            }
        }
        return out
    }
}
