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
        // One growing string, not an array of lines joined at the end: a plan of 100,000 records has
        // hundreds of thousands of lines, and the array and its joined copy were both alive at once.
        var text = ""
        func line(_ s: String) {
            text += s
            text += "\n"
        }
        if plan.changes.isEmpty {
            line("No changes: the store matches recipe \(plan.recipeName).")
        } else {
            line("sharelane will make these changes for recipe \(plan.recipeName) as \(plan.owner.handle):")
            line("")
            for change in plan.changes {
                line("  " + paint("\(change.symbol) \(change.kind.rawValue) \(change.addressTarget)", change.action))
                for attribute in Self.attributeLines(change) { line("      " + attribute) }
            }
        }
        if !plan.notes.isEmpty || !plan.waiting.isEmpty {
            line("")
            plan.notes.forEach(line)
            for waiting in plan.waiting { line(colors ? waiting.cyan : waiting) }
        }
        line("")
        line(colors ? plan.summary.line.bold : plan.summary.line)
        return text
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
