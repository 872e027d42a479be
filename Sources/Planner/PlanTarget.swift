import PlanModel
import Recipe
import ShareKit

/// An address given to `--target`, as plans print it: `zone FamilyLists`, `record Trips/italy`,
/// `record (public)/alice-card`, `share FamilyLists`, `share Trips/italy`, `participant FamilyLists/bob`,
/// `subscription alice/private/all-changes`; or
/// with a dot instead of the space (`record.Trips/italy`), which needs no quotes in a shell and is what
/// shell completion offers.
public struct PlanTarget: Sendable, Hashable, Codable, CustomStringConvertible {
    public var kind: PlannedChange.Kind
    /// What follows the kind: `FamilyLists`, `Trips/italy`, `FamilyLists/bob`.
    public var path: String

    /// Reads an address as plans print it.
    /// - Throws: `PlannerError.invalidTarget` for text that is not `KIND PATH` with a known kind.
    public init(parsing text: String) throws(PlannerError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let separator = PlannedChange.Kind.allCases.lazy.compactMap { kind -> String.Index? in
            let word = kind.rawValue
            guard trimmed.hasPrefix(word + " ") || trimmed.hasPrefix(word + ".") else { return nil }
            return trimmed.index(trimmed.startIndex, offsetBy: word.count)
        }.first
        guard let separator, let kind = PlannedChange.Kind(rawValue: String(trimmed[..<separator])) else {
            throw PlannerError.invalidTarget(text)
        }
        let path = trimmed[trimmed.index(after: separator)...].trimmingCharacters(in: .whitespaces)
        guard !path.isEmpty else { throw PlannerError.invalidTarget(text) }
        self.kind = kind
        self.path = path
    }

    public var description: String { "\(kind.rawValue) \(path)" }

    /// Every address the recipe declares, as plans print them: what a `--target` may name.
    static func declaredAddresses(of recipe: Recipe) -> [String] {
        var addresses: [String] = []
        func share(_ declaration: ShareDeclaration?, path: String) {
            guard case .share(let share) = declaration else { return }
            addresses.append("share \(path)")
            addresses += share.participants.map { "participant \(path)/\($0.handle)" }
        }
        for zone in recipe.zones {
            addresses.append("zone \(zone.name)")
            share(zone.share, path: zone.name)
            for record in zone.records {
                addresses.append("record \(zone.name)/\(record.name)")
                share(record.share, path: "\(zone.name)/\(record.name)")
            }
        }
        addresses += recipe.publicRecords.map { "record (public)/\($0.name)" }
        addresses += recipe.subscriptions.map { "subscription \($0.path)" }
        return addresses
    }

    /// Whether the change is one this address names. A zone names everything in it; a share names its
    /// participants too, since a share is saved with all of them.
    func names(_ change: PlannedChange) -> Bool {
        switch kind {
        case .zone: change.database == .private && change.zoneName == path
        case .record: change.address == description
        case .share:
            change.address == description || (change.kind == .participant && Self.sharePath(of: change) == path)
        case .participant, .subscription: change.address == description
        }
    }

    /// The share path (`Zone` or `Zone/root`) of a participant change: its address less the handle.
    static func sharePath(of change: PlannedChange) -> String? {
        guard change.kind == .participant else { return nil }
        let path = change.address.dropFirst("participant ".count)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}

/// Keeps the changes that `--target` addresses name, with what they need (Terraform's `-target`): a
/// record's zone and parents and the records its `VALIDATE` references point to, a share's zone and root
/// record, and for a participant its share and the share's other participant changes (a share is saved
/// whole, participants and all).
enum TargetSelection {
    /// The kept changes in plan order, and the targets that named no change.
    static func select(_ changes: [PlannedChange], targets: [PlanTarget]) -> (
        kept: [PlannedChange], unmatched: [PlanTarget]
    ) {
        var index: [String: Int] = [:]
        for (position, change) in changes.enumerated() { index[change.address] = position }
        var kept = Set<Int>()
        var queue: [Int] = []
        var unmatched: [PlanTarget] = []
        for target in targets {
            let named = changes.indices.filter { target.names(changes[$0]) }
            if named.isEmpty { unmatched.append(target) }
            queue += named
        }
        func need(_ address: String) {
            if let position = index[address] { queue.append(position) }
        }
        while let position = queue.popLast() {
            guard kept.insert(position).inserted else { continue }
            let change = changes[position]
            guard change.action != .delete else { continue }
            if change.database == .private { need("zone \(change.zoneName)") }
            let place = change.database == .public ? "(public)" : change.zoneName
            switch change.kind {
            case .zone:
                break
            case .record:
                if let parent = change.record?.parent { need("record \(place)/\(parent)") }
                for value in change.record?.fields.values ?? [:].values {
                    guard case .value(let field) = value else { continue }
                    for name in field.referencedRecordNames(action: .validate, inZone: change.zoneName) {
                        need("record \(place)/\(name)")
                    }
                }
            case .share:
                if let root = change.recordName { need("record \(place)/\(root)") }
            case .participant:
                guard let path = PlanTarget.sharePath(of: change) else { break }
                need("share \(path)")
                if let root = change.recordName { need("record \(place)/\(root)") }
                queue += changes.indices.filter { PlanTarget.sharePath(of: changes[$0]) == path }
            case .subscription:
                break
            }
        }
        return (kept.sorted().map { changes[$0] }, unmatched)
    }
}
