import Applier
import PlanModel
import Recipe
import ShareKit

/// Builds a plan's changes from the declared state and the live state, one zone at a time, keeping each
/// kind of change in its own list so that the plan comes out in a stable order.
struct PlanBuilder {
    let recipe: Recipe
    let users: UserDirectory
    /// The live state of the zones being planned; the planner sets each zone before adding it and drops it
    /// after, so that a large store is not held whole.
    var live: LiveState
    let actsAsAnyUser: Bool
    let prune: Bool
    /// Plan the removal of every declared zone and public record (`sharelane destroy`).
    var destroy = false

    var zoneCreates: [PlannedChange] = []
    var recordSaves: [PlannedChange] = []
    var shareSaves: [PlannedChange] = []
    var participantSaves: [PlannedChange] = []
    var publicSaves: [PlannedChange] = []
    var publicDeletes: [PlannedChange] = []
    var participantDeletes: [PlannedChange] = []
    var shareDeletes: [PlannedChange] = []
    var recordDeletes: [PlannedChange] = []
    var zoneDeletes: [PlannedChange] = []
    var subscriptionSaves: [PlannedChange] = []
    var subscriptionDeletes: [PlannedChange] = []
    var notes: [String] = []
    var waiting: [String] = []

    init(recipe: Recipe, users: UserDirectory, live: LiveState, actsAsAnyUser: Bool, prune: Bool) {
        self.recipe = recipe
        self.users = users
        self.live = live
        self.actsAsAnyUser = actsAsAnyUser
        self.prune = prune
    }

    /// How many changes the builder holds: a zone whose `add` leaves it unchanged plans to no changes.
    var changeCount: Int {
        zoneCreates.count + recordSaves.count + shareSaves.count + participantSaves.count + publicSaves.count
            + publicDeletes.count + participantDeletes.count + shareDeletes.count + recordDeletes.count
            + zoneDeletes.count
    }

    /// Every change, in the plan's order, taken out of the builder's lists (which are left empty).
    ///
    /// The record saves, by far the longest list, are moved rather than copied: the zone creations go in
    /// front of them in place, so the 100,000 changes of a large plan are not copied into a new array while
    /// the old one is still alive.
    mutating func takeOrderedChanges() -> [PlannedChange] {
        var changes: [PlannedChange] = []
        swap(&changes, &recordSaves)
        changes.insert(contentsOf: zoneCreates, at: 0)
        for list in [
            shareSaves, participantSaves, publicSaves, subscriptionSaves, subscriptionDeletes, publicDeletes,
            participantDeletes, recordDeletes, shareDeletes, zoneDeletes,
        ] {
            changes.append(contentsOf: list)
        }
        zoneCreates = []
        shareSaves = []
        participantSaves = []
        publicSaves = []
        publicDeletes = []
        participantDeletes = []
        shareDeletes = []
        recordDeletes = []
        zoneDeletes = []
        subscriptionSaves = []
        subscriptionDeletes = []
        return changes
    }

    /// Appends another builder's changes, notes and waiting lines to this one's, list by list: a zone added
    /// to a builder of its own (`eachAlone`), appended in the recipe's order, plans as adding it here would.
    mutating func append(_ other: PlanBuilder) {
        zoneCreates += other.zoneCreates
        recordSaves += other.recordSaves
        shareSaves += other.shareSaves
        participantSaves += other.participantSaves
        publicSaves += other.publicSaves
        publicDeletes += other.publicDeletes
        participantDeletes += other.participantDeletes
        shareDeletes += other.shareDeletes
        recordDeletes += other.recordDeletes
        zoneDeletes += other.zoneDeletes
        subscriptionSaves += other.subscriptionSaves
        subscriptionDeletes += other.subscriptionDeletes
        notes += other.notes
        waiting += other.waiting
    }

    /// Each zone added alone to a builder of its own, like this one but holding no change yet, on every core
    ///: what `add` gives a zone depends on the zone, the live state, the recipe, the users and the
    /// options, never on the zones added before it, so appending these in order (`append`) plans as adding
    /// the zones one after another does. Each zone's error, when it has one, is its result.
    func eachAlone(_ zones: ArraySlice<DeclaredZone>) -> [Result<PlanBuilder, any Error>] {
        var empty = PlanBuilder(recipe: recipe, users: users, live: live, actsAsAnyUser: actsAsAnyUser, prune: prune)
        empty.destroy = destroy
        let parts = OnEveryCore.parts(of: zones.count, atLeast: 1)
        let first = zones.startIndex
        return Array(
            OnEveryCore.map(parts.count) { part in
                parts[part].map { offset in
                    Result { () throws -> PlanBuilder in
                        var alone = empty
                        try alone.add(zones[first + offset])
                        return alone
                    }
                }
            }.joined())
    }

    // MARK: - Zones

    /// The note of a zone that keeps records the recipe does not declare, naming them (the first ten) so that
    /// a reviewer knows which: `1 undeclared record kept in Household: pharmacy; --prune deletes it.`
    static func undeclaredNote(_ names: [String], zone: String) -> String {
        "\(names.count) undeclared \(names.count == 1 ? "record" : "records") kept in \(zone): \(listed(names)); "
            + "--prune deletes \(names.count == 1 ? "it" : "them")."
    }

    /// Whether a note is `undeclaredNote`'s.
    static func isUndeclaredNote(_ note: String) -> Bool {
        note.contains(" undeclared record") && note.contains(" kept in ")
    }

    /// Names as a sentence lists them: `a`, `a and b`, `a, b and c`, the first ten then `and N more`.
    static func listed(_ names: [String]) -> String {
        let shown = names.prefix(10).map { DisplayText.escaped($0) }
        if names.count > shown.count { return shown.joined(separator: ", ") + " and \(names.count - shown.count) more" }
        guard shown.count > 1 else { return shown.first ?? "" }
        return shown.dropLast().joined(separator: ", ") + " and " + shown[shown.count - 1]
    }

    mutating func add(_ declared: DeclaredZone) throws {
        var zone = declared
        let liveZone = live.zones[zone.name]
        if destroy && zone.name == defaultZoneName {
            // The default zone cannot be deleted: destroying it deletes the records the recipe declares in it.
            for index in zone.records.indices { zone.records[index].absent = true }
        } else if zone.absent || destroy {
            if let liveZone {
                if destroy {
                    // What the recipe does not declare goes with the zone too; the plan says how much.
                    let declared = Set(zone.records.map(\.name))
                    let undeclared = liveZone.recordOrder.filter { !declared.contains($0) }
                    if !undeclared.isEmpty {
                        notes.append(
                            "\(undeclared.count) undeclared record\(undeclared.count == 1 ? "" : "s") in \(zone.name) "
                                + "go\(undeclared.count == 1 ? "es" : "") with the zone: \(Self.listed(undeclared)).")
                    }
                }
                zoneDeletes.append(
                    PlannedChange(
                        action: .delete, kind: .zone, address: "zone \(zone.name)", zoneName: zone.name,
                        attributes: [
                            AttributeChange(
                                name: "records", isField: false, before: .text(String(liveZone.records.count)),
                                after: nil)
                        ],
                        deletedRecordCount: liveZone.records.count))
            }
            return
        }
        if liveZone == nil && zone.name != defaultZoneName {
            zoneCreates.append(
                PlannedChange(action: .create, kind: .zone, address: "zone \(zone.name)", zoneName: zone.name))
        }
        let pruneZone = prune || zone.prune
        let firstSave = recordSaves.count
        defer { Self.orderDependencies(&recordSaves, from: firstSave, zone: zone.name, live: liveZone?.records ?? [:]) }
        var zoneRecordDeletes: [(depth: Int, change: PlannedChange)] = []
        for record in zone.records {
            let liveRecord = liveZone?.records[record.name]
            if record.absent {
                if let liveRecord {
                    zoneRecordDeletes.append(
                        (
                            liveZone?.depth(of: record.name) ?? 0,
                            deletion(of: liveRecord, zone: zone.name, database: .private)
                        ))
                }
                continue
            }
            if let change = try recordChange(
                record, live: liveRecord, zone: zone.name, database: .private, prune: pruneZone)
            {
                recordSaves.append(change)
            }
            if let share = record.share {
                try addShare(
                    share, zone: zone.name, root: record.name,
                    live: liveRecord == nil ? nil : liveZone?.share(rootedAt: record.name))
            }
        }
        if let liveZone {
            let declared = Set(zone.records.map(\.name))
            let undeclared = liveZone.recordOrder.filter { !declared.contains($0) }
            if pruneZone {
                for name in undeclared {
                    if let record = liveZone.records[name] {
                        zoneRecordDeletes.append(
                            (liveZone.depth(of: name), deletion(of: record, zone: zone.name, database: .private)))
                    }
                }
            } else if !undeclared.isEmpty {
                notes.append(Self.undeclaredNote(undeclared, zone: zone.name))
            }
        }
        recordDeletes += zoneRecordDeletes.sorted { ($0.depth, $1.change.address) > ($1.depth, $0.change.address) }
            .map(\.change)
        if let share = zone.share {
            try addShare(share, zone: zone.name, root: nil, live: liveZone?.zoneShare)
        }
    }

    /// Puts each record save after the saves of the records it needs to exist first: its parent and the
    /// targets of its `VALIDATE` references, when those are written in the same plan. The recipe's order is
    /// kept otherwise (a depth-first walk emitting each save after its dependencies), so a reference to a
    /// record declared further down does not fail the first apply. A cycle keeps the recipe's order.
    static func orderDependencies(
        _ saves: inout [PlannedChange], from start: Int, zone: String, live: [String: Record] = [:]
    ) {
        guard saves.count - start > 1 else { return }
        var position: [String: Int] = [:]
        var hasForwardDependency = false
        for index in start..<saves.count {
            if let name = saves[index].recordName { position[name] = index }
        }
        func dependencies(_ index: Int) -> [Int] {
            guard let record = saves[index].record else { return [] }
            var names = record.parent.map { [$0] } ?? []
            // Fields in name order: a dictionary's order differs from run to run, and the plan must not.
            for name in record.fields.keys.sorted() {
                if case .value(let v)? = record.fields[name] {
                    names += v.referencedRecordNames(action: .validate, inZone: zone)
                }
            }
            // An update writes some fields, but the store checks the record as it will be: the VALIDATE
            // references among the fields it keeps need their targets too (else a target deleted behind the
            // recipe's back would be created after the update that needs it).
            if record.operation == .update, let name = saves[index].recordName, let kept = live[name]?.fields {
                for field in kept.keys.sorted() where record.fields[field] == nil {
                    names += kept[field]?.referencedRecordNames(action: .validate, inZone: zone) ?? []
                }
            }
            return names.compactMap { position[$0] }.filter { $0 != index }
        }
        /// Whether a save depends on a later one: the same names as `dependencies`, in any order, without
        /// sorting or collecting them (most plans have none, and this is asked of every save).
        func dependsOnLater(_ index: Int) -> Bool {
            guard let record = saves[index].record else { return false }
            func later(_ name: String) -> Bool { position[name].map { $0 > index } ?? false }
            if let parent = record.parent, later(parent) { return true }
            for case .value(let v) in record.fields.values
            where v.referencedRecordNames(action: .validate, inZone: zone).contains(where: later) {
                return true
            }
            if record.operation == .update, let name = saves[index].recordName, let kept = live[name]?.fields {
                for (field, value) in kept where record.fields[field] == nil {
                    if value.referencedRecordNames(action: .validate, inZone: zone).contains(where: later) {
                        return true
                    }
                }
            }
            return false
        }
        for index in start..<saves.count where dependsOnLater(index) {
            hasForwardDependency = true
            break
        }
        guard hasForwardDependency else { return }
        var state = [UInt8](repeating: 0, count: saves.count - start)  // 0 new, 1 on the path, 2 emitted
        var order: [Int] = []
        order.reserveCapacity(saves.count - start)
        func visit(_ index: Int) {
            guard state[index - start] == 0 else { return }
            state[index - start] = 1
            for dependency in dependencies(index) { visit(dependency) }
            state[index - start] = 2
            order.append(index)
        }
        for index in start..<saves.count { visit(index) }
        let ordered = order.map { saves[$0] }
        saves.replaceSubrange(start..<saves.count, with: ordered)
    }

    // MARK: - Public records

    mutating func addPublic(_ records: [DeclaredRecord]) throws {
        var deletes: [(depth: Int, change: PlannedChange)] = []
        for record in records {
            let liveRecord = live.publicRecords[record.name]
            if record.absent || destroy {
                if let liveRecord {
                    deletes.append(
                        (
                            depth(of: record, in: records),
                            deletion(of: liveRecord, zone: defaultZoneName, database: .public)
                        ))
                }
                continue
            }
            if let change = try recordChange(
                record, live: liveRecord, zone: defaultZoneName, database: .public, prune: false)
            {
                publicSaves.append(change)
            }
        }
        Self.orderDependencies(&publicSaves, from: 0, zone: defaultZoneName)
        publicDeletes += deletes.sorted { ($0.depth, $1.change.address) > ($1.depth, $0.change.address) }.map(\.change)
    }

    private func depth(of record: DeclaredRecord, in records: [DeclaredRecord]) -> Int {
        var depth = 0
        var current = record.parent
        while let name = current, depth < records.count, let parent = records.first(where: { $0.name == name }) {
            depth += 1
            current = parent.parent
        }
        return depth
    }

    // MARK: - Records

    static func address(record: String, zone: String, database: DatabaseScope) -> String {
        database == .public ? "record (public)/\(record)" : "record \(zone)/\(record)"
    }

    /// A record's deletion, with what it deletes as its attributes' `before` (type, parent, fields), as
    /// Terraform shows a destroyed resource's attributes: a reviewer sees what is lost.
    private func deletion(of record: Record, zone: String, database: DatabaseScope) -> PlannedChange {
        var attributes = [AttributeChange(name: "type", isField: false, before: .text(record.recordType), after: nil)]
        if let parent = record.parent {
            attributes.append(AttributeChange(name: "parent", isField: false, before: .text(parent), after: nil))
        }
        for name in record.fields.keys.sorted() {
            attributes.append(
                AttributeChange(
                    name: name, isField: true, before: record.fields[name].map(PlannedValue.value), after: nil))
        }
        return PlannedChange(
            action: .delete, kind: .record,
            address: Self.address(record: record.recordName, zone: zone, database: database), database: database,
            zoneName: zone, recordName: record.recordName, attributes: attributes, baseChangeTag: record.changeTag)
    }

    /// The change that makes `live` match `declared`, or nil when they already match.
    private mutating func recordChange(
        _ declared: DeclaredRecord, live: Record?, zone: String, database: DatabaseScope, prune: Bool
    ) throws -> PlannedChange? {
        let address = Self.address(record: declared.name, zone: zone, database: database)
        var desired: [String: PlannedValue] = [:]
        desired.reserveCapacity(declared.fields.count)
        for (name, value) in declared.fields {
            desired[name] = try plannedValue(value, field: name, record: address)
        }
        guard let live else {
            var attributes = [AttributeChange(name: "type", isField: false, before: nil, after: .text(declared.type))]
            attributes.reserveCapacity(2 + desired.count)
            if let parent = declared.parent {
                attributes.append(AttributeChange(name: "parent", isField: false, before: nil, after: .text(parent)))
            }
            for name in desired.keys.sorted() {
                attributes.append(AttributeChange(name: name, isField: true, before: nil, after: desired[name]))
            }
            return PlannedChange(
                action: .create, kind: .record, address: address, database: database, zoneName: zone,
                recordName: declared.name, attributes: attributes,
                record: PlannedRecord(
                    recordType: declared.type, parent: declared.parent, fields: desired, operation: .create))
        }
        var attributes: [AttributeChange] = []
        let typeChanged = live.recordType != declared.type
        if typeChanged {
            notes.append(
                "\(address) changes type from \(live.recordType) to \(declared.type), which CloudKit refuses: mark it absent: true and apply, then declare it again."
            )
            attributes.append(
                AttributeChange(
                    name: "type", isField: false, before: .text(live.recordType), after: .text(declared.type)))
        }
        if live.parent != declared.parent {
            attributes.append(
                AttributeChange(
                    name: "parent", isField: false, before: live.parent.map(PlannedValue.text),
                    after: declared.parent.map(PlannedValue.text)))
        }
        var changedFields: [String: PlannedValue] = [:]
        for name in desired.keys.sorted() {
            let after = desired[name]
            let before = live.fields[name]
            if let before, case .value(let value)? = after, value.isSameValue(as: before) { continue }
            attributes.append(
                AttributeChange(name: name, isField: true, before: before.map(PlannedValue.value), after: after))
            changedFields[name] = after
        }
        let removed = prune ? live.fields.keys.filter { declared.fields[$0] == nil }.sorted() : []
        for name in removed {
            attributes.append(
                AttributeChange(
                    name: name, isField: true, before: live.fields[name].map(PlannedValue.value), after: nil))
        }
        if attributes.isEmpty { return nil }
        let replace = !removed.isEmpty || typeChanged || (live.parent != nil && declared.parent == nil)
        var fields = changedFields
        if replace {
            fields = desired
            for (name, value) in live.fields where desired[name] == nil && !removed.contains(name) {
                fields[name] = .value(value)
            }
        }
        return PlannedChange(
            action: .update, kind: .record, address: address, database: database, zoneName: zone,
            recordName: declared.name, attributes: attributes,
            record: PlannedRecord(
                recordType: declared.type, parent: declared.parent, fields: fields,
                operation: replace ? .replace : .update),
            baseChangeTag: live.changeTag)
    }

    /// A declared value as the plan writes it: `!share-url` becomes the live share's URL, or stays to be
    /// resolved after apply when the share does not exist yet.
    private func plannedValue(_ value: DeclaredValue, field: String, record: String) throws -> PlannedValue {
        switch value {
        case .value(let v):
            return .value(v)
        case .shareURL(let zone, let root):
            if let url = liveShareURL(zone: zone, root: root) { return .value(.string(url)) }
            guard isShareDeclared(zone: zone, root: root) else {
                throw PlannerError.unknownShare(
                    path: root.map { "\(zone)/\($0)" } ?? zone, field: field, record: record)
            }
            return .shareURL(zone: zone, record: root)
        }
    }

    private func liveShareURL(zone: String, root: String?) -> String? {
        guard let liveZone = live.zones[zone] else { return nil }
        let share = root.map { liveZone.share(rootedAt: $0) } ?? liveZone.zoneShare
        return share?.url
    }

    private func isShareDeclared(zone: String, root: String?) -> Bool {
        guard let declaredZone = recipe.zone(zone) else { return false }
        let declaration =
            root.map { name in declaredZone.records.first { $0.name == name }?.share } ?? declaredZone.share
        if case .share? = declaration { return true }
        return false
    }
}
