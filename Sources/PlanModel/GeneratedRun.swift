import ShareKit

/// Records one `repeat:` made that a plan changes alike, shown as one line: `+ 200 records
/// Household/item-{001…200} (Item)`. A generated recipe of 200 records otherwise printed a plan of
/// 1,693 lines, and again under every lane's `apply` step; `--expand` shows every record.
public struct GeneratedRun: Sendable, Hashable {
    /// How the public database is named in record addresses and in `Plan.generatedNames`.
    public static let publicZone = "(public)"

    public var action: PlannedChange.Action
    public var count: Int
    /// `Household/item-{001…200}`.
    public var names: String
    public var recordType: String?

    /// The line the text rendering prints, without its indent: `+ 200 records Household/item-{001…200} (Item)`.
    public var line: String {
        let symbol =
            switch action {
            case .create: "+"
            case .update: "~"
            case .delete: "-"
            }
        return "\(symbol) \(count) records \(names)" + (recordType.map { " (\($0))" } ?? "")
    }

    /// One entry of a rendering: a change, or a run of generated records.
    public enum Entry: Sendable {
        case change(PlannedChange)
        case run(GeneratedRun, [PlannedChange])
    }

    /// The plan's changes, with consecutive record changes of one action, one type and one `repeat:` taken
    /// together (two or more); every change as it is when `expand`.
    public static func entries(_ plan: Plan, expand: Bool) -> [Entry] {
        guard !expand, let generated = plan.generatedNames, !generated.isEmpty else {
            return plan.changes.map { .change($0) }
        }
        let templates = generated.mapValues { $0.map(NameTemplate.init) }
        var entries: [Entry] = []
        var index = plan.changes.startIndex
        while index < plan.changes.endIndex {
            let change = plan.changes[index]
            guard let (zone, template) = match(change, templates) else {
                entries.append(.change(change))
                index += 1
                continue
            }
            var end = index + 1
            while end < plan.changes.endIndex {
                let next = plan.changes[end]
                guard next.action == change.action, next.record?.recordType == change.record?.recordType,
                    let (nextZone, nextTemplate) = match(next, templates), nextZone == zone, nextTemplate == template
                else { break }
                end += 1
            }
            let run = Array(plan.changes[index..<end])
            if run.count < 2 {
                entries.append(.change(change))
            } else {
                let first = template.middle(of: run[0].recordName ?? "")
                let last = template.middle(of: run[run.count - 1].recordName ?? "")
                let names = "\(zone)/\(template.prefix){\(first)…\(last)}\(template.suffix)"
                entries.append(
                    .run(
                        GeneratedRun(
                            action: change.action, count: run.count, names: names,
                            recordType: change.record?.recordType),
                        run))
            }
            index = end
        }
        return entries
    }

    /// The zone and the template a record change's name was made from, if any.
    private static func match(_ change: PlannedChange, _ templates: [String: [NameTemplate]]) -> (
        String, NameTemplate
    )? {
        guard change.kind == .record, let name = change.recordName else { return nil }
        let zone = change.database == .public ? publicZone : change.zoneName
        guard let template = templates[zone]?.first(where: { $0.matches(name) }) else { return nil }
        return (zone, template)
    }
}

/// A record name template (`item-{{i:03}}`) as literal text around its placeholders.
struct NameTemplate: Hashable {
    /// The literal parts, in order; the first is before the first placeholder, the last after the last.
    let literals: [String]

    init(_ template: String) {
        var literals: [String] = []
        var rest = Substring(template)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            literals.append(String(rest[..<open.lowerBound]))
            rest = rest[close.upperBound...]
        }
        literals.append(String(rest))
        self.literals = literals
    }

    var prefix: String { literals.first ?? "" }
    var suffix: String { literals.count > 1 ? literals[literals.count - 1] : "" }

    func matches(_ name: String) -> Bool {
        guard literals.count > 1, name.hasPrefix(prefix), name.hasSuffix(suffix),
            name.count > prefix.count + suffix.count
        else { return false }
        var rest = name.dropFirst(prefix.count).dropLast(suffix.count)
        for literal in literals.dropFirst().dropLast() where !literal.isEmpty {
            guard let found = rest.range(of: literal) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }

    /// The name less the template's prefix and suffix: `001` of `item-001`.
    func middle(of name: String) -> String {
        String(name.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
