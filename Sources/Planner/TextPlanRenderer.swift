import Rainbow

/// Renders a plan as text: one `+ ~ -` line per change with its address, then each attribute (`name:
/// value` for additions, `name: before → after` for updates), the notes, and the summary line.
///
/// With `colors`, additions are green, updates yellow and deletions red, through Rainbow; the caller decides
/// (a terminal, `NO_COLOR` unset) and enables Rainbow's output.
public struct TextPlanRenderer: Sendable {
    public var colors: Bool

    public init(colors: Bool = false) {
        self.colors = colors
    }

    public func render(_ plan: Plan) -> String {
        var lines: [String] = []
        if plan.changes.isEmpty {
            lines.append("No changes: the store matches recipe \(plan.recipeName).")
        } else {
            lines.append("sharelane will make these changes for recipe \(plan.recipeName) as \(plan.owner.handle):")
            lines.append("")
            for change in plan.changes {
                lines.append("  " + paint("\(change.symbol) \(change.kind.rawValue) \(change.addressTarget)", change.action))
                lines += Self.attributeLines(change).map { "      " + $0 }
            }
        }
        if !plan.notes.isEmpty || !plan.waiting.isEmpty {
            lines.append("")
            lines += plan.notes
            lines += plan.waiting.map { colors ? $0.cyan : $0 }
        }
        lines.append("")
        lines.append(colors ? plan.summary.line.bold : plan.summary.line)
        return lines.joined(separator: "\n") + "\n"
    }

    private func paint(_ text: String, _ action: PlannedChange.Action) -> String {
        guard colors else { return text }
        switch action {
        case .create: return text.green
        case .update: return text.yellow
        case .delete: return text.red
        }
    }

    /// The attribute lines of a change, names aligned: `title: "Groceries"`, `qty: 2 → 3`.
    static func attributeLines(_ change: PlannedChange) -> [String] {
        let width = change.attributes.map(\.name.count).max() ?? 0
        return change.attributes.map { attribute in
            // Plain Swift padding, not Foundation's NSString `padding(toLength:)`: a large plan has hundreds of thousands of lines.
            let name = attribute.name + ":" + String(repeating: " ", count: max(0, width - attribute.name.count))
            return "\(name) \(valueText(attribute, action: change.action))"
        }
    }

    static func valueText(_ attribute: AttributeChange, action: PlannedChange.Action) -> String {
        switch (attribute.before, attribute.after) {
        case (nil, let after?) where action == .create: return after.displayString
        case (let before?, nil) where action == .delete: return before.displayString
        case (let before, let after):
            return "\(before?.displayString ?? "(none)") → \(after?.displayString ?? "(removed)")"
        }
    }
}

extension PlannedChange {
    /// The address without its leading kind: `FamilyLists/groceries` for `record FamilyLists/groceries`.
    var addressTarget: String {
        let prefix = kind.rawValue + " "
        return address.hasPrefix(prefix) ? String(address.dropFirst(prefix.count)) : address
    }
}
