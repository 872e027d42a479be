import Foundation
import ShareKit

/// Draws a random valid recipe: 2–5 users, 1–3 zones, zone-wide and hierarchy shares, participants with
/// every permission and role, every field type a recipe writes, nesting, a generated record, public records,
/// users' subscriptions of every type.
struct RecipeGenerator {
    var random: CheckRandom
    let bugs: KnownBugs
    private var nextRecord = 1

    static let handles = ["alice", "bob", "carol", "dana", "erin"]
    static let types = ["Note", "Item", "Task"]
    static let words = ["apple", "river", "stone", "cloud", "maple", "tiger", "lemon"]

    init(random: CheckRandom, bugs: KnownBugs) {
        self.random = random
        self.bugs = bugs
    }

    mutating func recipe() -> RecipeSpec {
        let users = Array(Self.handles.prefix(random.int(2...5)))
        // A third of the recipes have several owners: each zone in the private database of one of the first
        // three users, who share with each other (an owner takes part in another owner's shares).
        let owners = random.chance(0.35) ? Array(users.prefix(3)) : [users[0]]
        var zones: [ZoneSpec] = []
        for z in 1...random.int(1...3) {
            let owner = random.pick(owners)
            zones.append(zone("Z\(z)", users: users, owner: owner == users[0] ? nil : owner))
        }
        var publicRecords: [RecordSpec] = []
        for _ in 0..<random.int(0...2) {
            publicRecords.append(RecordSpec(name: newRecordName(prefix: "pub"), type: "Card", fields: scalarFields()))
        }
        var spec = RecipeSpec(users: users, zones: zones, publicRecords: publicRecords)
        for _ in 0..<random.int(0...3) {
            let subscription = subscription(in: spec)
            if !spec.subscriptions.contains(where: { $0.id == subscription.id || $0.isTwin(of: subscription) }) {
                spec.subscriptions.append(subscription)
            }
        }
        return spec
    }

    /// A subscription valid in `spec`: a database subscription of any user, a zone or private query
    /// subscription of the owner on one of the zones the recipe keeps, or a public query subscription.
    mutating func subscription(in spec: RecipeSpec) -> SubscriptionSpec {
        let liveZones = spec.zones.filter { !$0.absent }.map(\.name)
        switch random.int(0...5) {
        case 0, 1:
            return SubscriptionSpec(user: random.pick(spec.users), database: random.pick(["private", "shared"]))
        case 2 where !liveZones.isEmpty:
            // A zone is watched in its owner's private database.
            let zone = random.pick(liveZones)
            return SubscriptionSpec(user: spec.owner(ofZone: zone), database: "private", kind: .zone, zone: zone)
        case 3, 4:
            var query = SubscriptionSpec(user: spec.owner, database: "private", kind: .query)
            if let zone = random.maybePick(liveZones), random.chance(0.8) {
                query.user = spec.owner(ofZone: zone)
                query.zone = zone
                query.recordType = random.pick(Self.types + ["Gen"])
            } else {
                query.user = random.pick(spec.users)
                query.database = "public"
                query.recordType = "Card"
            }
            if random.chance(0.5) {
                let triggers = ["create", "update", "delete"].filter { _ in random.chance(0.6) }
                query.firesOn = triggers.isEmpty ? ["update"] : triggers
            }
            query.firesOnce = random.chance(0.25)
            return query
        default:
            return SubscriptionSpec(user: random.pick(spec.users), database: "shared")
        }
    }

    private mutating func zone(_ name: String, users: [String], owner: String?) -> ZoneSpec {
        var zone = ZoneSpec(name: name, owner: owner)
        // The zone's participants: everyone but its owner.
        let users = [owner ?? users[0]] + users.filter { $0 != (owner ?? users[0]) }
        let roll = random.int(0...9)
        if roll < 4 {
            zone.share = .share(share(users: users))
        } else if roll == 4 {
            zone.share = .none
        }
        let zoneShared = roll < 4
        var declared: [String] = []
        for _ in 0..<random.int(1...3) {
            zone.records.append(record(depth: 0, sharedAbove: zoneShared, users: users, declared: &declared))
        }
        // Fields are drawn once every name is known, so references may point forwards as well as back.
        fillFields(&zone.records, all: declared)
        if random.chance(0.3) {
            zone.records.append(
                RecordSpec(
                    name: "gen-{{i}}", type: "Gen",
                    fields: [
                        FieldSpec(name: "title", value: .template("Gen {{i}}")),
                        FieldSpec(name: "n", value: .template("{{i}}")),
                        FieldSpec(name: "note", value: .template("{{fake.sentence}}")),
                    ], repeatCount: random.int(2...3)))
        }
        zone.prune = random.chance(0.15)
        return zone
    }

    private mutating func record(depth: Int, sharedAbove: Bool, users: [String], declared: inout [String])
        -> RecordSpec
    {
        var record = RecordSpec(name: newRecordName(), type: random.pick(Self.types))
        declared.append(record.name)
        var shared = sharedAbove
        if !sharedAbove && random.chance(depth == 0 ? 0.35 : 0.15) {
            record.share = .share(share(users: users))
            shared = true
        }
        if depth < 2 {
            for _ in 0..<random.int(0...(depth == 0 ? 2 : 1)) {
                record.children.append(
                    self.record(depth: depth + 1, sharedAbove: shared, users: users, declared: &declared))
            }
        }
        return record
    }

    /// Draws each record's fields; `all` lists the zone's record names in declaration order.
    private mutating func fillFields(_ records: inout [RecordSpec], all: [String]) {
        for index in records.indices {
            let name = records[index].name
            let position = all.firstIndex(of: name) ?? 0
            let earlier = Array(all[..<position])
            let others = all.filter { $0 != name }
            records[index].fields = fields(earlier: earlier, others: others)
            fillFields(&records[index].children, all: all)
        }
    }

    mutating func share(users: [String]) -> ShareSpec {
        var spec = ShareSpec(
            title: random.chance(0.5) ? "Shared \(random.pick(Self.words))" : nil, publicPermission: .none,
            participants: [])
        let roll = random.int(0...9)
        if roll == 0 {
            spec.publicPermission = .readOnly
            return spec
        }
        if roll == 1 {
            spec.publicPermission = .readWrite
            return spec
        }
        for handle in users.dropFirst() where random.chance(0.6) {
            spec.participants.append(participant(handle))
        }
        return spec
    }

    mutating func participant(_ handle: String) -> ParticipantSpec {
        let permission: Permission = random.chance(0.5) ? .readOnly : .readWrite
        let administrator = random.chance(0.2)
        // An administrator manages the share and is read-write: recipes refuse a read-only one.
        return ParticipantSpec(
            handle: handle, permission: administrator ? .readWrite : permission, administrator: administrator,
            accepted: random.chance(0.7), shortForm: random.chance(0.5))
    }

    /// What the loader says of records that need each other written first (a write-order cycle).
    static let writeOrderCycle = "each need the next one written first"

    /// Up to three fields, each named after its value's kind (`FieldSpecValue.fieldName`), so that a field
    /// keeps one type across records and mutations, as CloudKit's schema requires.
    mutating func fields(earlier: [String], others: [String]) -> [FieldSpec] {
        var result: [FieldSpec] = []
        for _ in 0..<random.int(0...3) {
            let value = value(earlier: earlier, others: others)
            if !result.contains(where: { $0.name == value.fieldName }) {
                result.append(FieldSpec(name: value.fieldName, value: value))
            }
        }
        return result
    }

    mutating func scalarFields() -> [FieldSpec] {
        var result: [FieldSpec] = []
        for _ in 0..<random.int(1...2) {
            let value = value(earlier: [], others: [])
            if !result.contains(where: { $0.name == value.fieldName }) {
                result.append(FieldSpec(name: value.fieldName, value: value))
            }
        }
        return result
    }

    mutating func value(earlier: [String], others: [String]) -> FieldSpecValue {
        let kinds = others.isEmpty ? 11 : 14
        switch random.int(0...(kinds - 1)) {
        case 0: return .string("\(random.pick(Self.words))-\(random.int(1...99))")
        case 1: return .int(random.int(-1000...1000))
        case 2: return .double(Double(random.int(-400...400)) + 0.5)
        case 3: return .bool(random.chance(0.5))
        case 4: return .timestamp("2024-0\(random.int(1...9))-0\(random.int(1...9))T09:\(random.int(10...59)):00Z")
        case 5: return .strings((0..<random.int(1...3)).map { _ in random.pick(Self.words) })
        case 6: return .ints((0..<random.int(1...3)).map { _ in random.int(0...50) })
        case 7: return .doubles((0..<random.int(1...3)).map { _ in Double(random.int(0...50)) + 0.25 })
        case 8:
            return .bytes(Data((0..<random.int(1...6)).map { _ in UInt8(random.int(0...255)) }).base64EncodedString())
        case 9: return .location(Double(random.int(-160...160)) / 2 + 0.25, Double(random.int(-340...340)) / 2 + 0.25)
        case 10:
            if random.chance(0.7) { return .asset(random.pick(CheckAssets.names)) }
            return .assets((0..<random.int(1...3)).map { _ in random.pick(CheckAssets.names) })
        case 11: return .ref(random.pick(others))
        case 12:
            return .refAction(random.pick(others), random.chance(0.5) ? .none : .deleteSelf)
        default:
            // A validate reference to a later record is written after its target; one into
            // the holder's own hierarchy makes a write-order cycle, which the case generation draws again.
            let targets = bugs.validateReferenceToLaterRecord ? earlier : others
            guard let target = random.maybePick(targets) else { return .ref(random.pick(others)) }
            return .refAction(target, .validate)
        }
    }

    mutating func newRecordName(prefix: String = "r") -> String {
        defer { nextRecord += 1 }
        return "\(prefix)\(nextRecord)"
    }

    /// Makes later generated names follow those already in `spec`.
    mutating func continueNumbering(after spec: RecipeSpec) {
        var highest = 0
        for zone in spec.zones {
            for (record, _) in spec.records(in: zone.name) {
                highest = max(highest, Int(record.name.drop { !$0.isNumber }) ?? 0)
            }
        }
        for record in spec.publicRecords { highest = max(highest, Int(record.name.drop { !$0.isNumber }) ?? 0) }
        nextRecord = max(nextRecord, highest + 1)
    }
}
