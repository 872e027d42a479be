import ShareKit

/// Renders a plan as text: one `+ ~ -` line per change with its address, then each attribute (`name:
/// value` for additions, `name: before → after` for updates), the notes, and the summary line.
///
/// The `style` marks changes, waiting lines and the summary; the caller chooses it (the command line
/// colours on a terminal where `NO_COLOR` is unset).
public struct TextPlanRenderer: Sendable {
    public var style: TextStyle
    /// Every generated record on its own lines; by default the records one `repeat:` made that change
    /// alike are one line (`GeneratedRun`).
    public var expand: Bool

    public init(style: TextStyle = .plain, expand: Bool = false) {
        self.style = style
        self.expand = expand
    }

    public func render(_ plan: Plan) -> String {
        var text = ""
        write(plan, to: &text)
        return text
    }

    /// Writes the rendering to `output` line by line.
    public func write<Output: TextOutputStream>(_ plan: Plan, to output: inout Output) {
        func line(_ s: String) {
            output.write(s)
            output.write("\n")
        }
        if let against = plan.against {
            line(DisplayText.escaped(against.line))
            line("")
        }
        let schemaChanges = plan.schemaChanges
        if !schemaChanges.isEmpty {
            line("Schema changes (\(plan.schema?.environment.rawValue ?? "development")), made first:")
            line("")
            for change in schemaChanges {
                line("  " + style.change(DisplayText.escaped(change.description), change.planAction))
            }
            line("")
        }
        if plan.changes.isEmpty {
            if schemaChanges.isEmpty {
                line(
                    plan.against == nil
                        ? "No changes: \(DisplayText.escaped(plan.worldName)) matches recipe \(DisplayText.escaped(plan.recipeName))."
                        : "No changes: recipe \(DisplayText.escaped(plan.recipeName)) declares what the base recipe declares."
                )
            }
        } else {
            line(
                "sharelane will make these changes"
                    + (plan.against == nil ? " to \(DisplayText.escaped(plan.worldName))" : "")
                    + " for recipe \(DisplayText.escaped(plan.recipeName))"
                    + (plan.zoneOwners == nil ? " as \(plan.owner.handle):" : ", each zone as its owner:")
            )
            line("")
            // A plan of several owners lists each owner's changes together, under the owner's name.
            var currentOwner: String?
            for entry in GeneratedRun.entries(plan, expand: expand) {
                if plan.zoneOwners != nil, case .change(let change) = entry, plan.owner(of: change) != currentOwner {
                    let owner = plan.owner(of: change)
                    if currentOwner != nil { line("") }
                    currentOwner = owner
                    line("\(DisplayText.escaped(owner))'s private database, as \(DisplayText.escaped(owner)):")
                }
                guard case .change(let change) = entry else {
                    if case .run(let run, _) = entry {
                        line("  " + style.change(DisplayText.escaped(run.line), run.action))
                    }
                    continue
                }
                line(
                    "  "
                        + style.change(
                            "\(change.symbol) \(change.kind.rawValue) \(DisplayText.escaped(change.addressTarget))"
                                + (change.subscription.map { " (\($0.subscription.kind.rawValue))" } ?? ""),
                            change.action))
                Self.writeAttributeLines(change, indent: "      ", to: &output)
            }
        }
        if !plan.notes.isEmpty || !plan.waiting.isEmpty {
            line("")
            for note in plan.notes { line(DisplayText.escaped(note)) }
            for waiting in plan.waiting { line(style.waiting(DisplayText.escaped(waiting))) }
        }
        line("")
        if !schemaChanges.isEmpty { line(style.summary(Self.schemaLine(schemaChanges))) }
        line(style.summary(plan.summary.line))
    }

    /// `Schema: 2 types, 5 fields to add, 1 field's indexes to change.`
    static func schemaLine(_ changes: [SchemaChange]) -> String {
        func count(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }
        let types = changes.count { $0.kind == .addType }
        let fields = changes.count { $0.kind == .addField }
        let indexes = changes.count { $0.kind == .changeIndexes }
        var parts: [String] = []
        if types + fields > 0 {
            parts.append(
                [types > 0 ? count(types, "type", "types") : nil, fields > 0 ? count(fields, "field", "fields") : nil]
                    .compactMap { $0 }.joined(separator: ", ") + " to add")
        }
        if indexes > 0 { parts.append(count(indexes, "field's indexes", "fields' indexes") + " to change") }
        return "Schema: " + parts.joined(separator: ", ") + "."
    }

    /// The attribute lines of a change, names aligned: `title: "Groceries"`, `qty: 2 → 3`.
    static func attributeLines(_ change: PlannedChange) -> [String] {
        let width = nameWidth(change)
        return change.attributes.map { attributeLine($0, width: width, action: change.action) }
    }

    /// Writes each attribute line of a change after `indent`, ending it with a newline.
    static func writeAttributeLines<Output: TextOutputStream>(
        _ change: PlannedChange, indent: String, to output: inout Output
    ) {
        let width = nameWidth(change)
        for attribute in change.attributes {
            output.write(indent)
            output.write(attributeLine(attribute, width: width, action: change.action))
            output.write("\n")
        }
    }

    private static func nameWidth(_ change: PlannedChange) -> Int {
        var width = 0
        for attribute in change.attributes { width = max(width, attribute.name.count) }
        return width
    }

    private static func attributeLine(_ attribute: AttributeChange, width: Int, action: PlannedChange.Action) -> String
    {
        // Plain Swift padding, not Foundation's NSString `padding(toLength:)`: a large plan has hundreds of
        // thousands of lines.
        DisplayText.escaped(attribute.name) + ":"
            + String(repeating: " ", count: max(0, width - attribute.name.count) + 1)
            + valueText(attribute, action: action)
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
