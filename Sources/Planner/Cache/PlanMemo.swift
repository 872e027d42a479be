import Applier
import Crypto
import Foundation
import PlanModel
import Recipe
import ShareKit

/// What a `PlanCache` file holds: the store's change token from before the last plan read its zones, and
/// for each zone that planned to no changes, what its plan depended on and what it took from the store.
struct PlanMemo: Sendable, Codable {
    /// The version of the cache file's format, written in each file; a file of another version is not read.
    /// It also salts every zone's digest (`Context.key`), so that digests of another version never match.
    /// 4: the remembered recipe's users packed in columns (`PackedUsers`).
    static let formatVersion = 4

    /// One zone that planned to no changes.
    struct Zone: Sendable {
        /// The digest of what the zone's plan depended on (`PlanMemo.digest(context:content:)`).
        var digest: String
        /// The same digest without the places in the recipe the declaration's shares are written at
        /// (`Digests.placeless`); nil when not known. A zone whose plan had no note or waiting line (the only
        /// text of a plan without changes that could name a place) is remembered when only they moved: a line
        /// added above it in the file.
        var placeless: String? = nil
        var exists: Bool
        /// The change tags the plan's basis holds for the zone.
        var tags: ChangeTags
        /// The zone's live shares (for the plan's access before and after).
        var shares: [Share]
        /// The notes and waiting lines the zone's plan gave.
        var notes: [String]
        var waiting: [String]
        /// The zone's change token after the read (its changes since are what changed after it); nil when the
        /// zone did not exist.
        var token: ChangeToken?
        /// How many live records of the zone the recipe does not declare.
        var undeclared: Int
    }

    var version: Int
    var storeName: String
    var owner: UserRecordName
    var databaseToken: ChangeToken
    var zones: [String: Zone]
    /// The recipe planned, when it was loaded from files: a later plan of the same files plans from the memo
    /// without loading them.
    var recipe: RememberedRecipe?

    /// A memo in this version (`formatVersion`): the one place a memo is made.
    init(
        storeName: String, owner: UserRecordName, databaseToken: ChangeToken = ChangeToken(rawValue: ""),
        zones: [String: Zone] = [:], recipe: RememberedRecipe? = nil
    ) {
        version = Self.formatVersion
        self.storeName = storeName
        self.owner = owner
        self.databaseToken = databaseToken
        self.zones = zones
        self.recipe = recipe
    }

    /// The memo in `file` in this version, whatever its store and owner; nil otherwise.
    static func load(_ file: URL) -> PlanMemo? {
        guard let data = try? Data(contentsOf: file),
            let memo = try? JSONDecoder().decode(PlanMemo.self, from: data),
            memo.version == formatVersion
        else { return nil }
        return memo
    }

    /// The memo in `file`, when there is one for this store and owner in this version; nil otherwise.
    static func load(_ file: URL, storeName: String, owner: UserRecordName) -> PlanMemo? {
        guard let memo = load(file), memo.storeName == storeName, memo.owner == owner else { return nil }
        return memo
    }

    /// Writes the memo to `file` (replacing it whole, so a reader sees the old one or the new one); a file
    /// that cannot be written only costs the next plan a full read.
    /// - Parameter recipeJSON: the memo's `recipe` already encoded (`PlanCache.startEncoding`),
    ///   written in as it is; the memo's own `recipe` is then left out.
    func save(to file: URL, recipeJSON: Data? = nil) {
        var memo = self
        if recipeJSON != nil { memo.recipe = nil }
        guard var data = try? JSONEncoder().encode(memo) else { return }
        if let recipeJSON {
            // `{…}` becomes `{…,"recipe":…}`: the memo always has members, and JSON allows them in any order.
            guard data.last == UInt8(ascii: "}") else { return }
            data.removeLast()
            data.append(contentsOf: #","recipe":"#.utf8)
            data.append(recipeJSON)
            data.append(UInt8(ascii: "}"))
        }
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        CacheFileWriting.replace(file, with: data)
    }

    /// A digest of everything a zone's plan depends on besides the live zone: the zone as declared (its
    /// `content`, `contents(of:)`) and the plan's context (`Context.key`).
    static func digest(context: String, content: String) -> String {
        hex(SHA256.hash(data: Data((context + "\u{0}" + content).utf8)))
    }

    /// What every zone's plan depends on besides the zone's declaration: the users and their record names,
    /// the owner, container and seed (a stable share URL is derived from them), and the options.
    struct Context: Sendable {
        var container: String
        var seed: UInt64
        var users: UserDirectory
        var prune: Bool
        var destroy: Bool
        var actsAsAnyUser: Bool

        init(recipe: Recipe, users: UserDirectory, prune: Bool, destroy: Bool, actsAsAnyUser: Bool) {
            container = recipe.container
            seed = recipe.seed
            self.users = users
            self.prune = prune
            self.destroy = destroy
            self.actsAsAnyUser = actsAsAnyUser
        }

        /// The context as a digest, written field by field in a fixed order: the same in every process.
        var key: String {
            var input = DigestInput()
            input.feed(
                "v\(PlanMemo.formatVersion)", container, users.owner.email, String(seed), "\(prune)", "\(destroy)",
                "\(actsAsAnyUser)")
            for entry in users.entries {
                input.feed(entry.handle, entry.email, entry.name ?? "", entry.recordName ?? "")
            }
            return input.digest
        }
    }

    /// A zone's digests in the context whose key is `context`.
    struct Digests: Sendable {
        /// What the zone's plan depends on: the context and the declaration (`digest(context:content:)`).
        var full: String
        /// The declaration alone (`contents(of:)`): its declared records are kept under it.
        var content: String
        /// `full` and `content` without the places the shares are written at; nil when not known.
        var placeless: String?
        var placelessContent: String?
    }

    static func digests(of zone: DeclaredZone, context: String) -> Digests {
        let (content, placeless) = contents(of: zone)
        return Digests(
            full: digest(context: context, content: content), content: content,
            placeless: digest(context: context, content: placeless), placelessContent: placeless)
    }

    /// A digest of a zone as declared: its name, options, share and records. Written field by field in a
    /// fixed order, dictionaries sorted, so it is the same in every process; the zone's declared records are
    /// kept under it beside the cache file (`DeclaredRecordFile`).
    ///
    /// `placeless` leaves out the places in the recipe the shares and participants are written at, and
    /// `content` is that digest with the places: a line added above the zone changes `content` only.
    static func contents(of zone: DeclaredZone) -> (content: String, placeless: String) {
        // One buffer hashed once: a zone of 100,000 records is a few megabytes, and small updates cost more.
        var input = DigestInput(capacity: zone.records.count * 64)
        var places = DigestInput()
        func feed(_ parts: String...) { input.feed(parts) }
        // Rare values are spelled as JSON with sorted keys: every member, the same in every process. Not by
        // their description, which reflects on an optional's value (`Mirror`).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func spelled<Value: Encodable>(_ value: Value) -> String {
            (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? String(describing: value)
        }
        // A share declaration member by member: as JSON, the shares of 100 zones cost more than all their
        // records. The member count goes first, so that no two lists feed the same parts.
        func feedShare(_ declaration: ShareDeclaration?) {
            switch declaration {
            case nil: feed("share?")
            case .none?: feed("share:none")
            case .share(let share)?:
                feed(
                    "share", share.title.map { "=" + $0 } ?? "", share.publicPermission.rawValue,
                    share.stableURL ? "stable" : "", String(share.participants.count))
                places.feed([share.location.description])
                for p in share.participants {
                    feed(p.handle, p.permission.rawValue, p.role.rawValue, p.accepted ? "accepted" : "")
                    places.feed([p.location.description])
                }
            }
        }
        feed(zone.name, zone.prune ? "prune" : "", zone.absent ? "absent" : "")
        feedShare(zone.share)
        for record in zone.records {
            feed(record.name, record.type, record.parent ?? "", record.absent ? "absent" : "")
            feedShare(record.share)
            for key in record.fields.keys.sorted() {
                // The common values spelled directly, the others as JSON.
                switch record.fields[key] {
                case .value(.string(let text))?: feed(key, "s", text)
                case .value(.int64(let number))?: feed(key, "i", String(number))
                case .value(.double(let number))?: feed(key, "d", String(number))
                case let other: feed(key, spelled(other))
                }
            }
        }
        let placeless = input.digest
        var withPlaces = DigestInput()
        withPlaces.feed([placeless])
        withPlaces.bytes += places.bytes
        return (withPlaces.digest, placeless)
    }

    /// Parts fed into one digest, each followed by a zero byte, so that no two lists of parts feed the same
    /// bytes.
    private struct DigestInput {
        var bytes: [UInt8] = []

        init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

        mutating func feed(_ parts: String...) { feed(parts) }

        mutating func feed(_ parts: [String]) {
            for part in parts {
                bytes.append(contentsOf: part.utf8)
                bytes.append(0)
            }
        }

        /// The SHA-256 of what was fed, in lowercase hexadecimal.
        var digest: String { PlanMemo.hex(SHA256.hash(data: bytes)) }
    }

    /// The digest in lowercase hexadecimal.
    fileprivate static func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(SHA256.byteCount * 2)
        for byte in digest {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

// MARK: - Codable

extension PlanMemo.Zone: Codable {
    enum CodingKeys: String, CodingKey {
        case digest, placeless, exists, tags, shares, notes, waiting, token, undeclared
    }

    /// The change tags as one string (`ChangeTags`): a zone of 100,000 records reads and writes in a
    /// fraction of the time a JSON object of them takes, and a plan that takes the zone from the file does
    /// not unpack them.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        digest = try container.decode(String.self, forKey: .digest)
        placeless = try container.decodeIfPresent(String.self, forKey: .placeless)
        exists = try container.decode(Bool.self, forKey: .exists)
        shares = try container.decode([Share].self, forKey: .shares)
        notes = try container.decode([String].self, forKey: .notes)
        waiting = try container.decode([String].self, forKey: .waiting)
        token = try container.decodeIfPresent(ChangeToken.self, forKey: .token)
        undeclared = try container.decode(Int.self, forKey: .undeclared)
        guard let tags = ChangeTags(packed: try container.decode(String.self, forKey: .tags)) else {
            throw DecodingError.dataCorruptedError(
                forKey: .tags, in: container, debugDescription: "change tags that are not lines")
        }
        self.tags = tags
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(digest, forKey: .digest)
        try container.encodeIfPresent(placeless, forKey: .placeless)
        try container.encode(exists, forKey: .exists)
        try container.encode(shares, forKey: .shares)
        try container.encode(notes, forKey: .notes)
        try container.encode(waiting, forKey: .waiting)
        try container.encodeIfPresent(token, forKey: .token)
        try container.encode(undeclared, forKey: .undeclared)
        // A name with a tab or newline cannot be packed: no memo is written, and the next plan reads all.
        guard let packed = tags.packedText else {
            throw EncodingError.invalidValue(
                digest, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "a tab or newline"))
        }
        try container.encode(packed, forKey: .tags)
    }
}

/// What a plan remembers of a recipe loaded from files, so that the next plan of the same files can plan
/// without loading them: what the files were, the recipe without its zones' records (those are kept per zone
/// in `DeclaredRecordFile`s), the users as the store knew them, and each zone's digest.
struct RememberedRecipe: Sendable, Codable {
    var inputs: RecipeInputs
    /// The recipe, each zone's `records` and the `variables` left empty.
    var header: Recipe
    var users: UserDirectory
    /// The plan's options that a zone's plan depends on (`PlanMemo.optionsKey`).
    var options: String
    /// Each zone's digest, by zone name.
    var digests: [String: String]
    /// Each zone's declaration's digest (`PlanMemo.contents(of:)`), by zone name: its declared records are kept
    /// under it.
    var contents: [String: String] = [:]

    init(recipe: Recipe, inputs: RecipeInputs, users: UserDirectory, options: String, digests: [String: String]) {
        var header = recipe
        for index in header.zones.indices { header.zones[index].records = [] }
        // A plan does not need the variables' values, and the file does not keep them.
        header.variables = [:]
        self.header = header
        self.inputs = inputs
        self.users = users
        self.options = options
        self.digests = digests
    }
}

// MARK: - Codable

extension RememberedRecipe {
    private enum CodingKeys: String, CodingKey { case inputs, header, users, options, digests, contents }

    /// The header's users and the directory are written once, column by column (`PackedUsers`).
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        inputs = try container.decode(RecipeInputs.self, forKey: .inputs)
        header = try container.decode(Recipe.self, forKey: .header)
        let packed = try container.decode(PackedUsers.self, forKey: .users)
        header.users = try packed.declared()
        users = try packed.userDirectory()
        options = try container.decode(String.self, forKey: .options)
        digests = try container.decode([String: String].self, forKey: .digests)
        contents = try container.decode([String: String].self, forKey: .contents)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(inputs, forKey: .inputs)
        var header = header
        header.users = []
        try container.encode(header, forKey: .header)
        try container.encode(PackedUsers(declared: self.header.users, directory: users), forKey: .users)
        try container.encode(options, forKey: .options)
        try container.encode(digests, forKey: .digests)
        try container.encode(contents, forKey: .contents)
    }
}

extension PlanMemo {
    /// The options a zone's plan depends on, as one string.
    static func optionsKey(prune: Bool, destroy: Bool, actsAsAnyUser: Bool) -> String {
        "prune=\(prune) destroy=\(destroy) actsAsAnyUser=\(actsAsAnyUser)"
    }

    /// Where the declared records of the memo's zones are kept: beside the cache file.
    static func recordsDirectory(of file: URL) -> URL {
        file.deletingPathExtension().appendingPathExtension("records")
    }
}
