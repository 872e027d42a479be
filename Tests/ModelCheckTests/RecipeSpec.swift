import Foundation
import ShareKit

/// A generated recipe as data: what the checker changes, shrinks and renders as YAML for the real loader.
///
/// The first user owns the zones. Handles are also the local part of each user's email address, so an
/// exported recipe (which names users after their addresses) uses the same handles.
struct RecipeSpec: Hashable, Sendable {
    var users: [String]
    var zones: [ZoneSpec]
    var publicRecords: [RecordSpec]
    /// Users' subscriptions of every type, each with its own ID.
    var subscriptions: [SubscriptionSpec] = []

    var owner: String { users[0] }
    /// The handle of the owner of the zone of this name: its `owner:`, else the recipe's.
    func owner(ofZone name: String) -> String { zone(name)?.owner ?? owner }
    /// The users who own zones, the recipe's owner first.
    var owners: [String] {
        var owners = [owner]
        for zone in zones {
            if let other = zone.owner, !owners.contains(other) { owners.append(other) }
        }
        return owners
    }
    /// The users who may take part in the shares of the zone of this name: all but its owner.
    func participants(ofZone name: String) -> [String] { users.filter { $0 != owner(ofZone: name) } }

    func zone(_ name: String) -> ZoneSpec? { zones.first { $0.name == name } }

    /// Every record of a zone with its parent, parents first; generated records are left out.
    func records(in zone: String) -> [(record: RecordSpec, parent: String?)] {
        guard let spec = self.zone(zone) else { return [] }
        var result: [(record: RecordSpec, parent: String?)] = []
        func walk(_ records: [RecordSpec], _ parent: String?) {
            for record in records where record.repeatCount == nil {
                result.append((record, parent))
                walk(record.children, record.name)
            }
        }
        walk(spec.records, nil)
        return result
    }

    /// The shares the recipe declares: a zone's (root nil) or a record's.
    var declaredShares: [(zone: String, root: String?, share: ShareSpec)] {
        var result: [(zone: String, root: String?, share: ShareSpec)] = []
        for zone in zones where !zone.absent {
            if case .share(let share) = zone.share { result.append((zone.name, nil, share)) }
            for (record, _) in records(in: zone.name) where !record.absent {
                if case .share(let share) = record.share { result.append((zone.name, record.name, share)) }
            }
        }
        return result
    }

    /// Changes the record named `name` in `zone`; false when there is none.
    @discardableResult
    mutating func updateRecord(_ name: String, in zone: String, _ change: (inout RecordSpec) -> Void) -> Bool {
        guard let z = zones.firstIndex(where: { $0.name == zone }) else { return false }
        return RecordSpec.update(name, in: &zones[z].records, change)
    }

    /// Removes the record named `name` (with its children) from `zone`; false when there is none.
    @discardableResult
    mutating func removeRecord(_ name: String, in zone: String) -> Bool {
        guard let z = zones.firstIndex(where: { $0.name == zone }) else { return false }
        return RecordSpec.remove(name, from: &zones[z].records)
    }

    /// Names every record of every zone refers to with `!ref`.
    func referencedNames(in zone: String) -> Set<String> {
        var names: Set<String> = []
        for (record, _) in records(in: zone) {
            for field in record.fields {
                if let target = field.value.referenceTarget { names.insert(target) }
            }
        }
        return names
    }

    // MARK: - YAML

    /// The recipe as YAML text, with an optional lane of already-rendered steps.
    func yaml(name: String = "check", lane: [String] = []) -> String {
        var out = "sharelane: 1\nname: \(name)\nowner: \(owner)\nusers:\n"
        for user in users { out += "  \(user): { email: \(user)@example.com }\n" }
        if !zones.isEmpty {
            out += "zones:\n"
            for zone in zones {
                if zone.absent {
                    out += "  \(zone.name): { \(zone.owner.map { "owner: \($0), " } ?? "")absent: true }\n"
                    continue
                }
                out += "  \(zone.name):\n"
                if let owner = zone.owner { out += "    owner: \(owner)\n" }
                if zone.prune { out += "    prune: true\n" }
                zone.share.render(indent: 4, into: &out)
                if !zone.records.isEmpty {
                    out += "    records:\n"
                    for record in zone.records { record.render(indent: 6, into: &out) }
                }
            }
        }
        if !publicRecords.isEmpty {
            out += "public:\n  records:\n"
            for record in publicRecords { record.render(indent: 4, into: &out) }
        }
        if !subscriptions.isEmpty {
            out += "subscriptions:\n"
            for subscription in subscriptions { out += "  - \(subscription.yaml)\n" }
        }
        if !lane.isEmpty {
            out += "lanes:\n  check:\n    steps:\n"
            for step in lane { out += "      - \(step)\n" }
        }
        return out
    }
}

/// A user's subscription in one of their databases: a `database` subscription (private or shared), a `zone`
/// subscription on one of the owner's zones, or a `query` subscription (on an owner's zone in the private
/// database, or on the public database's default zone).
struct SubscriptionSpec: Hashable, Sendable {
    enum Kind: String, Hashable, Sendable { case database, zone, query }
    var user: String
    var database: String
    var kind: Kind = .database
    /// The watched zone (`zone`, and a private `query`).
    var zone: String?
    var recordType: String?
    /// `fires_on` (`query` only); nil for all three.
    var firesOn: [String]?
    var firesOnce = false

    /// Unique per user and database by construction: what the subscription watches names it.
    var id: String {
        var id = "\(user)-\(database)-\(kind.rawValue)"
        if let zone { id += "-\(zone)" }
        if let recordType { id += "-\(recordType)" }
        return id
    }

    /// Whether CloudKit would refuse holding both: query subscriptions of one user and database on the same
    /// record type and `fires_on` set (`Subscription.queryTwinKey`).
    func isTwin(of other: SubscriptionSpec) -> Bool {
        kind == .query && other.kind == .query && user == other.user && database == other.database
            && recordType == other.recordType
            && Set(firesOn ?? Self.allTriggers) == Set(other.firesOn ?? Self.allTriggers)
            && id != other.id
    }

    static let allTriggers = ["create", "update", "delete"]

    var yaml: String {
        var parts = ["as: \(user)", "id: \(id)", "database: \(database)", "type: \(kind.rawValue)"]
        if let zone { parts.append("zone: \(zone)") }
        if let recordType { parts.append("record_type: \(recordType)") }
        if let firesOn { parts.append("fires_on: [\(firesOn.joined(separator: ", "))]") }
        if firesOnce { parts.append("fires_once: true") }
        return "{ " + parts.joined(separator: ", ") + " }"
    }
}

struct ZoneSpec: Hashable, Sendable {
    var name: String
    /// The zone's owner when it is not the recipe's (`owner:`): the zone lives in their private database.
    var owner: String?
    var share: ShareDeclaration = .unset
    var records: [RecordSpec] = []
    var prune = false
    var absent = false
}

/// A `share:` key: left out, `share: none`, or a share.
enum ShareDeclaration: Hashable, Sendable {
    case unset
    case none
    case share(ShareSpec)

    func render(indent: Int, into out: inout String) {
        let pad = String(repeating: " ", count: indent)
        switch self {
        case .unset: return
        case .none: out += "\(pad)share: none\n"
        case .share(let share):
            out += "\(pad)share:\n"
            if let title = share.title { out += "\(pad)  title: \"\(title)\"\n" }
            out += "\(pad)  public_permission: \(share.publicPermission.recipeName)\n"
            if !share.participants.isEmpty {
                out += "\(pad)  participants:\n"
                for p in share.participants {
                    if p.accepted && !p.administrator && p.shortForm {
                        out += "\(pad)    \(p.handle): \(p.permission.recipeName)\n"
                    } else {
                        let role = p.administrator ? ", role: administrator" : ""
                        out +=
                            "\(pad)    \(p.handle): { permission: \(p.permission.recipeName), accepted: \(p.accepted)\(role) }\n"
                    }
                }
            }
        }
    }
}

struct ShareSpec: Hashable, Sendable {
    var title: String?
    var publicPermission: Permission
    var participants: [ParticipantSpec]
}

struct ParticipantSpec: Hashable, Sendable {
    var handle: String
    var permission: Permission
    var administrator: Bool
    var accepted: Bool
    /// Written as `handle: read-only` (only when accepted and not an administrator).
    var shortForm: Bool
}

struct RecordSpec: Hashable, Sendable {
    var name: String
    var type: String
    var fields: [FieldSpec] = []
    var children: [RecordSpec] = []
    var share: ShareDeclaration = .unset
    var absent = false
    /// `repeat: N`: the name holds `{{i}}`.
    var repeatCount: Int? = nil

    func render(indent: Int, into out: inout String) {
        let pad = String(repeating: " ", count: indent)
        let key = repeatCount == nil ? name : "\"\(name)\""
        if absent {
            out += "\(pad)\(key): { absent: true }\n"
            return
        }
        out += "\(pad)\(key):\n"
        if let repeatCount { out += "\(pad)  repeat: \(repeatCount)\n" }
        out += "\(pad)  type: \(type)\n"
        if !fields.isEmpty {
            out += "\(pad)  fields:\n"
            for field in fields { out += "\(pad)    \(field.name): \(field.value.yaml)\n" }
        }
        share.render(indent: indent + 2, into: &out)
        if !children.isEmpty {
            out += "\(pad)  children:\n"
            for child in children { child.render(indent: indent + 4, into: &out) }
        }
    }

    static func update(_ name: String, in records: inout [RecordSpec], _ change: (inout RecordSpec) -> Void) -> Bool {
        for index in records.indices {
            if records[index].name == name {
                change(&records[index])
                return true
            }
            if update(name, in: &records[index].children, change) { return true }
        }
        return false
    }

    static func remove(_ name: String, from records: inout [RecordSpec]) -> Bool {
        if let index = records.firstIndex(where: { $0.name == name }) {
            records.remove(at: index)
            return true
        }
        for index in records.indices where remove(name, from: &records[index].children) { return true }
        return false
    }
}

struct FieldSpec: Hashable, Sendable {
    var name: String
    var value: FieldSpecValue
}

/// A field value as a recipe writes it, one case per YAML form the checker generates.
enum FieldSpecValue: Hashable, Sendable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    /// ISO 8601, as YAML's timestamp.
    case timestamp(String)
    case strings([String])
    case ints([Int])
    case doubles([Double])
    /// `!ref NAME`
    case ref(String)
    /// `{ref: NAME, action: ACTION}`
    case refAction(String, ReferenceAction)
    /// `!bytes BASE64`
    case bytes(String)
    case location(Double, Double)
    /// `!asset files/NAME`, one of `CheckAssets.names`
    case asset(String)
    /// `[!asset files/NAME, …]`
    case assets([String])
    /// A generated value: `"{{i}}"`, `"{{fake.sentence}}"`, …, only in generated records.
    case template(String)

    /// The field name a generated value of this kind goes in: a field keeps one type in CloudKit, so each
    /// name holds one type (a string is `s`, a whole number `n`, a boolean `flag`, which is INT64 too).
    var fieldName: String {
        switch self {
        case .string: "s"
        case .int: "n"
        case .double: "d"
        case .bool: "flag"
        case .timestamp: "at"
        case .strings: "tags"
        case .ints: "counts"
        case .doubles: "weights"
        case .ref, .refAction: "link"
        case .bytes: "blob"
        case .location: "place"
        case .asset: "cover"
        case .assets: "covers"
        case .template: "text"
        }
    }

    var yaml: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .bool(let b): b ? "true" : "false"
        case .timestamp(let t): t
        case .strings(let list): "[" + list.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        case .ints(let list): "[" + list.map(String.init).joined(separator: ", ") + "]"
        case .doubles(let list): "[" + list.map { String($0) }.joined(separator: ", ") + "]"
        case .ref(let name): "!ref \(name)"
        case .refAction(let name, let action): "{ ref: \(name), action: \(action.recipeWord) }"
        case .bytes(let b): "!bytes \(b)"
        case .location(let lat, let lon): "{ latitude: \(lat), longitude: \(lon) }"
        case .asset(let name): "!asset \(CheckAssets.folder)/\(name)"
        case .assets(let names): "[" + names.map { "!asset \(CheckAssets.folder)/\($0)" }.joined(separator: ", ") + "]"
        case .template(let t): "\"\(t)\""
        }
    }

    var referenceTarget: String? {
        switch self {
        case .ref(let name), .refAction(let name, _): name
        default: nil
        }
    }
}

extension ReferenceAction {
    /// The word a recipe writes for this action.
    var recipeWord: String {
        switch self {
        case .none: "none"
        case .deleteSelf: "delete-self"
        case .validate: "validate"
        }
    }
}
