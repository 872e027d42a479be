import Foundation
import ShareKit

/// Turns a merged, variable-expanded recipe tree into the declared model, collecting every problem instead
/// of stopping at the first. Cross-references (users, records, shares, lanes) are checked afterwards by
/// `RecipeValidator`.
final class RecipeDecoder {
    /// At most this many records in a recipe, generated ones included.
    static let maxRecords = 1_000_000
    /// The largest `repeat:`.
    static let maxRepeat = 1_000_000

    static let topLevelKeys = [
        "sharelane", "name", "description", "container", "environment", "seed", "vars", "include", "users", "owner",
        "zones", "public", "lanes", "before_all", "after_all", "error", "schema", "subscriptions", "before_each",
        "after_each",
    ]
    static let userKeys = ["email", "name", "phone", "discoverable"]
    static let zoneKeys = ["owner", "share", "records", "prune", "absent"]
    static let recordKeys = ["type", "fields", "children", "parent", "share", "absent", "repeat"]
    static let shareKeys = ["title", "public_permission", "participants", "stable_url"]
    static let participantKeys = ["permission", "accepted", "role"]
    static let publicKeys = ["records"]

    var errors: [RecipeError] = []
    /// `!ref` and `{ref:}` values, checked once every record is known.
    var references: [PendingReference] = []
    /// `!share-url` values, checked once every share is known.
    var shareURLs: [PendingShareURL] = []
    /// Where each record's `parent:` key was written, for messages.
    var parentLocations: [String: SourceLocation] = [:]
    /// The fields written with an explicit type (`{type: …, value: …}`), by the place of their record or
    /// lane step: the others may take their field's type from the recipe's schema (`SchemaInference`).
    var typedFields: [SourceLocation: Set<String>] = [:]
    /// The records each `repeat:` made so far; a zone takes those made while its records were decoded.
    var generated: [GeneratedRecords] = []

    var seed: UInt64 = 0
    /// Where `owner:` was written.
    var ownerLocation: SourceLocation?
    /// Users whose own entry has an error (reported there): references to them are not reported again.
    var faultyUserHandles: Set<String> = []
    /// The recipe's directory as the user named it; `!asset` values are stored relative to it.
    let rootDirectory: String
    var recordCount = 0
    /// The most records this decoder reads (`maxRecords`; tests lower it).
    var recordLimit = RecipeDecoder.maxRecords
    /// Zones are decoded in parts on several cores when each part has at least this many (`decodeZones`; tests
    /// raise it to decode in one piece).
    var zonesPerPart = OnEveryCore.zonesPerPart
    /// How many parts at most: one a core (tests set more).
    var cores = OnEveryCore.cores
    /// Plain scalars already typed, by text: a `repeat:` of 100,000 records types the same `3` and `1.5`
    /// again for every record, and Yams' resolver matches regular expressions each time.
    var resolvedScalars: [String: ScalarResolver.Resolved] = [:]
    /// Templates already read, by text: a `repeat:` expands the same few templates for every record.
    private var compiledTemplates: [String: Template.Compiled] = [:]

    /// Where every `!asset` file read is noted.
    let log: InputLog

    init(rootDirectory: String, log: InputLog = InputLog()) {
        self.log = log
        self.rootDirectory = rootDirectory
    }

    /// Expands the placeholders of `text` (see `Template`), reading each distinct template once.
    /// - Parameter recordPath: the record's path, which decides its `fake.city` (see `Template.expand`).
    func expandTemplate(_ text: String, index: Int?, path: String, recordPath: String? = nil) throws(TemplateError)
        -> Template.Result
    {
        if let compiled = compiledTemplates[text] {
            return try compiled.expand(index: index, seed: seed, path: path, recordPath: recordPath)
        }
        let compiled = Template.Compiled(text)
        compiledTemplates[text] = compiled
        return try compiled.expand(index: index, seed: seed, path: path, recordPath: recordPath)
    }

    func error(_ message: String, _ location: SourceLocation) {
        errors.append(RecipeError(message, at: location))
    }

    // MARK: - Basic values

    /// The pairs of a mapping; a null value counts as an empty mapping.
    func pairs(_ node: RecipeNode, _ what: String) -> [RecipePair]? {
        switch node.content {
        case .mapping(let pairs): return pairs
        case .scalar(let s, let plain) where plain && ScalarResolver.isNull(s): return []
        default:
            error("\(what) must be a mapping, not \(node.kindDescription)", node.location)
            return nil
        }
    }

    /// Reports keys that `allowed` does not list, with the closest known key as a hint.
    func checkKeys(_ pairs: [RecipePair], allowed: [String], in what: String) {
        for pair in pairs where !allowed.contains(pair.key) {
            if what == "the recipe", pair.key.hasPrefix("x-") { continue }  // extension keys hold anchors
            var message = "unknown key `\(pair.key)` in \(what)"
            if let hint = Suggestion.closest(to: pair.key, in: allowed) {
                message += "; did you mean `\(hint)`?"
            } else {
                message += "; expected one of: " + allowed.map { "`\($0)`" }.joined(separator: ", ")
            }
            error(message, pair.keyLocation)
        }
    }

    func string(_ node: RecipeNode, _ what: String) -> String? {
        guard case .scalar(let s, let plain) = node.content, !(plain && ScalarResolver.isNull(s)) else {
            error("\(what) must be text, not \(node.kindDescription)", node.location)
            return nil
        }
        return s
    }

    func bool(_ node: RecipeNode, _ what: String) -> Bool? {
        if case .scalar(let s, true) = node.content, case .bool(let b) = ScalarResolver.resolve(s) { return b }
        var hint = ""
        if case .scalar(let s, false) = node.content, case .bool = ScalarResolver.resolve(s) {
            hint = "; write \(s) without quotes"
        }
        error("\(what) must be `true` or `false`, not \(node.kindDescription)\(hint)", node.location)
        return nil
    }

    func integer(_ node: RecipeNode, _ what: String) -> Int64? {
        if case .scalar(let s, true) = node.content, case .int(let i) = ScalarResolver.resolve(s) { return i }
        error("\(what) must be a whole number, not \(node.kindDescription)", node.location)
        return nil
    }

    func number(_ node: RecipeNode, _ what: String) -> Double? {
        if case .scalar(let s, true) = node.content {
            switch ScalarResolver.resolve(s) {
            case .int(let i): return Double(i)
            case .double(let d) where d.isFinite: return d
            default: break
            }
        }
        error("\(what) must be a number, not \(node.kindDescription)", node.location)
        return nil
    }

    /// A permission word: `none`, `read-only` or `read-write`.
    func permission(_ node: RecipeNode, _ what: String, allowNone: Bool) -> Permission? {
        guard let word = string(node, what) else { return nil }
        let words = allowNone ? ["none", "read-only", "read-write"] : ["read-only", "read-write"]
        if let p = Permission(recipeName: word), allowNone || p != .none { return p }
        var message = "unknown permission `\(word)` for \(what)"
        if let hint = Suggestion.closest(to: word, in: words) {
            message += "; did you mean `\(hint)`?"
        } else {
            message += "; use " + words.map { "`\($0)`" }.joined(separator: " or ")
        }
        if !allowNone && word == "none" {
            message =
                "a participant's permission is `read-only` or `read-write`; remove the participant instead of `none`"
        }
        error(message, node.location)
        return nil
    }

    // MARK: - The recipe

    func decode(_ root: RecipeNode, file: String, variables: [String: String]) -> Recipe? {
        guard let top = pairs(root, "a recipe") else { return nil }
        checkKeys(top, allowed: Self.topLevelKeys, in: "the recipe")
        let start = SourceLocation(file: file, line: 1, column: 1)

        var formatVersion = 1
        if let node = root["sharelane"] {
            if let v = integer(node, "`sharelane`") {
                if v != 1 {
                    error("format version \(v) is not supported; this sharelane reads `sharelane: 1`", node.location)
                }
                formatVersion = Int(v)
            }
        } else {
            error("missing `sharelane: 1` (the recipe format version)", start)
        }
        var name = ""
        if let node = root["name"] {
            name = string(node, "`name`") ?? ""
        } else {
            error("missing `name:`; it names the recipe in plans and logs", start)
        }
        let description = root["description"].flatMap { string($0, "`description`") }
        var container = Recipe.defaultContainer
        if let node = root["container"], let c = string(node, "`container`") {
            container = c
            // The rule every store and `serve` hold a container to, said where the recipe gives it.
            if let problem = StoreWorld.containerProblem(c) { error("`container`: \(problem)", node.location) }
        }
        var environment = CloudKitEnvironment.development
        if let node = root["environment"], let word = string(node, "`environment`") {
            if let e = CloudKitEnvironment(rawValue: word) {
                environment = e
            } else {
                error(
                    "unknown environment `\(word)`"
                        + (Suggestion.closest(to: word, in: CloudKitEnvironment.allCases.map(\.rawValue)).map {
                            "; did you mean `\($0)`?"
                        }
                            ?? "; use `development` or `production`"),
                    node.location)
            }
        }
        if let node = root["seed"] {
            if case .scalar(let s, true) = node.content, case .int(let i) = ScalarResolver.resolve(s), i >= 0 {
                seed = UInt64(i)
            } else {
                error("`seed` must be a whole number ≥ 0, not \(node.kindDescription)", node.location)
            }
        }

        let users = decodeUsers(root["users"])
        var zones: [DeclaredZone] = []
        if let node = root["zones"], let zonePairs = pairs(node, "`zones`") { zones = decodeZones(zonePairs) }
        var owner = ""
        if let node = root["owner"] {
            owner = string(node, "`owner`") ?? ""
            ownerLocation = node.location
        } else if users.count == 1 {
            owner = users[0].handle
        } else if users.isEmpty {
            error(
                "no `users:`; declare at least the owner, e.g. `users: { alice: { email: alice@example.com } }`",
                root["users"]?.location ?? start)
        } else if let first = zones.first?.owner, zones.allSatisfy({ $0.owner != nil }) {
            // Every zone names its owner: the first zone's holds the public records and the schema.
            owner = first
        } else {
            error(
                "`owner:` is missing and there are \(users.count) users; say whose private database holds the zones, e.g. `owner: \(users[0].handle)`, or give each zone an `owner:`",
                start)
        }
        // A zone of the recipe's owner is the same whether it says so or not.
        for index in zones.indices where zones[index].owner == owner { zones[index].owner = nil }
        var publicRecords: [DeclaredRecord] = []
        var generatedPublicRecords: [GeneratedRecords] = []
        if let node = root["public"], let publicPairs = pairs(node, "`public`") {
            checkKeys(publicPairs, allowed: Self.publicKeys, in: "`public`")
            if let recordsNode = node["records"] {
                let before = generated.count
                decodeRecords(recordsNode, zone: nil, parent: nil, index: nil, into: &publicRecords)
                generatedPublicRecords = Array(generated[before...])
            }
        }

        var lanes: [Lane] = []
        if let node = root["lanes"], let lanePairs = pairs(node, "`lanes`") {
            for pair in lanePairs {
                if let lane = decodeLane(pair) { lanes.append(lane) }
            }
        }
        let beforeAll = root["before_all"].map { decodeSteps($0, "`before_all`") } ?? []
        let afterAll = root["after_all"].map { decodeSteps($0, "`after_all`") } ?? []
        let onError = root["error"].map { decodeSteps($0, "`error`") } ?? []

        var recipe = Recipe(
            formatVersion: formatVersion, name: name, description: description, container: container,
            environment: environment, seed: seed, file: file, variables: variables, users: users, owner: owner,
            zones: zones, publicRecords: publicRecords, lanes: lanes, beforeAll: beforeAll, afterAll: afterAll,
            onError: onError)
        recipe.generatedPublicRecords = generatedPublicRecords
        recipe.beforeEach = root["before_each"].map { decodeSteps($0, "`before_each`") } ?? []
        recipe.afterEach = root["after_each"].map { decodeSteps($0, "`after_each`") } ?? []
        if let node = root["schema"] { recipe.schema = decodeSchema(node) }
        if let node = root["subscriptions"] {
            recipe.subscriptions = decodeSubscriptions(node, users: users, owner: owner, zones: zones)
        }
        return recipe
    }

    // MARK: - Zones

    /// The zones, in order. Many are decoded in parts, one a core (a recipe of 100 zones spent a
    /// tenth of its apply here, on one core of two): each part by a decoder of its own that starts from this
    /// one's state, its findings (errors, references, share URLs, parents' places, files read) joined to this
    /// one's in zone order, as one decoder would have found them. A recipe over the record limit is decoded
    /// again in one piece, so that the limit is reported where one decoder reports it.
    private func decodeZones(_ pairs: [RecipePair]) -> [DeclaredZone] {
        let ranges = OnEveryCore.parts(of: pairs.count, atLeast: zonesPerPart, cores: cores)
        guard ranges.count > 1 else { return pairs.compactMap(decodeZone) }
        let parts = ranges.map { Array(pairs[$0]) }
        let decoders = parts.map { _ in part() }
        let zones = OnEveryCore.map(parts.count) { parts[$0].compactMap(decoders[$0].decodeZone) }
        let declared = decoders.reduce(recordCount) { $0 + $1.recordCount - recordCount }
        guard declared <= recordLimit else { return pairs.compactMap(decodeZone) }
        recordCount = declared
        for decoder in decoders {
            errors += decoder.errors
            references += decoder.references
            shareURLs += decoder.shareURLs
            parentLocations.merge(decoder.parentLocations) { _, later in later }
            typedFields.merge(decoder.typedFields) { earlier, later in earlier.union(later) }
            log.merge(decoder.log)
        }
        return zones.flatMap { $0 }
    }

    /// A decoder for a part of the zones: this one's state so far, its own lists of findings and files read.
    private func part() -> RecipeDecoder {
        let decoder = RecipeDecoder(rootDirectory: rootDirectory)
        decoder.seed = seed
        decoder.ownerLocation = ownerLocation
        decoder.faultyUserHandles = faultyUserHandles
        decoder.recordCount = recordCount
        decoder.recordLimit = recordLimit
        decoder.resolvedScalars = resolvedScalars
        decoder.compiledTemplates = compiledTemplates
        return decoder
    }

    private func decodeZone(_ pair: RecipePair) -> DeclaredZone? {
        let name = pair.key
        if let problem = CloudKitLimits.zoneNameProblem(name) { error(problem, pair.keyLocation) }
        guard let zonePairs = pairs(pair.value, "zone `\(name)`") else { return nil }
        checkKeys(zonePairs, allowed: Self.zoneKeys, in: "zone `\(name)`")
        var zone = DeclaredZone(name: name, location: pair.keyLocation)
        if let node = pair.value["owner"] {
            zone.owner = string(node, "`owner`")
            zone.ownerLocation = node.location
        }
        if let node = pair.value["prune"] { zone.prune = bool(node, "`prune`") ?? false }
        if let node = pair.value["absent"] { zone.absent = bool(node, "`absent`") ?? false }
        if let node = pair.value["share"] {
            zone.share = decodeShare(
                node, owner: "zone `\(name)`", at: keyLocation(pair.value, "share") ?? node.location)
            if name == defaultZoneName, case .share = zone.share {
                error("`\(defaultZoneName)` cannot be shared; CloudKit shares live in custom zones", node.location)
            }
        }
        if let node = pair.value["records"] {
            let before = generated.count
            decodeRecords(node, zone: name, parent: nil, index: nil, into: &zone.records)
            zone.generated = Array(generated[before...])
        }
        if zone.absent && (zone.share != nil || !zone.records.isEmpty) {
            error("zone `\(name)` is `absent: true` and cannot also declare records or a share", pair.keyLocation)
        }
        return zone
    }

    // MARK: - Shares

    /// Where `key` is written in a mapping node.
    func keyLocation(_ node: RecipeNode, _ key: String) -> SourceLocation? {
        node.pairs?.first { $0.key == key }?.keyLocation
    }

    /// Decodes a `share:` value; `at` is where the `share:` key is, which locates the share in messages.
    func decodeShare(_ node: RecipeNode, owner: String, at keyLocation: SourceLocation) -> ShareDeclaration? {
        if case .scalar(let s, let plain) = node.content, !(plain && ScalarResolver.isNull(s)) {
            if s == "none" { return ShareDeclaration.none }
            error(
                "`share` is a mapping (`title`, `public_permission`, `participants`) or `none`, not `\(s)`",
                node.location)
            return nil
        }
        guard let sharePairs = pairs(node, "the share of \(owner)") else { return nil }
        checkKeys(sharePairs, allowed: Self.shareKeys, in: "the share of \(owner)")
        var share = DeclaredShare(location: keyLocation)
        share.title = node["title"].flatMap { string($0, "`title`") }
        share.stableURL = node["stable_url"].flatMap { bool($0, "`stable_url`") } ?? false
        var publicNode: RecipeNode? = nil
        if let p = node["public_permission"] {
            publicNode = p
            share.publicPermission = permission(p, "`public_permission`", allowNone: true) ?? .none
        }
        if let participantsNode = node["participants"] {
            share.participants = decodeParticipants(participantsNode)
            if let problem = AccessRules.participantCountProblem(share.participants.count) {
                error(problem, self.keyLocation(node, "participants") ?? participantsNode.location)
            }
            if let publicNode,
                let problem = AccessRules.mixingProblem(
                    publicPermission: share.publicPermission, hasPrivateParticipants: !share.participants.isEmpty)
            {
                error(problem, publicNode.location)
            }
        }
        return .share(share)
    }

    private func decodeParticipants(_ node: RecipeNode) -> [DeclaredParticipant] {
        guard let participantPairs = pairs(node, "`participants`") else { return [] }
        var participants: [DeclaredParticipant] = []
        for pair in participantPairs {
            var participant = DeclaredParticipant(handle: pair.key, permission: .readOnly, location: pair.keyLocation)
            switch pair.value.content {
            case .scalar:
                guard let p = permission(pair.value, "participant `\(pair.key)`", allowNone: false) else { continue }
                participant.permission = p
            case .mapping(let fields):
                checkKeys(fields, allowed: Self.participantKeys, in: "participant `\(pair.key)`")
                if let p = pair.value["permission"] {
                    guard let permission = permission(p, "participant `\(pair.key)`", allowNone: false) else {
                        continue
                    }
                    participant.permission = permission
                } else {
                    error(
                        "participant `\(pair.key)` needs a `permission:` (`read-only` or `read-write`)",
                        pair.value.location)
                    continue
                }
                if let a = pair.value["accepted"] { participant.accepted = bool(a, "`accepted`") ?? true }
                if let r = pair.value["role"], let word = string(r, "`role`") {
                    switch word {
                    case "administrator": participant.role = .administrator
                    case "private-user", "user": participant.role = .privateUser
                    default:
                        error(
                            "unknown role `\(word)`"
                                + (Suggestion.closest(to: word, in: ["administrator", "private-user"]).map {
                                    "; did you mean `\($0)`?"
                                }
                                    ?? "; a participant's role is `administrator` or `private-user`"),
                            r.location)
                    }
                }
            case .sequence:
                error("participant `\(pair.key)` is a permission or a mapping, not a list", pair.value.location)
                continue
            }
            if participant.role == .administrator, participant.permission != .readWrite {
                error(
                    "participant `\(pair.key)` is an administrator with `\(participant.permission.recipeName)`; an administrator manages the share and has `permission: read-write`",
                    pair.value["permission"]?.location ?? pair.keyLocation)
            }
            participants.append(participant)
        }
        return participants
    }
}

/// A reference to check once all records are known.
struct PendingReference: Equatable {
    /// The zone of the record holding the reference; nil for the public database.
    var fromZone: String?
    /// The zone the reference names; nil means `fromZone`.
    var zone: String?
    var recordName: String
    var location: SourceLocation
}

/// A `!share-url` to check once all shares are known.
struct PendingShareURL: Equatable {
    var zone: String
    var record: String?
    /// The zone of the record holding the field; nil for the public database.
    var fromZone: String?
    var location: SourceLocation
}

extension Template.Result {
    /// The result as text.
    var text: String {
        switch self {
        case .text(let s): s
        case .int(let i): String(i)
        case .timestamp(let ms): Template.isoDate(ms)
        case .location(let latitude, let longitude): "\(latitude), \(longitude)"
        }
    }
}
