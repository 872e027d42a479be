import ShareKit

/// The difference between a recipe's declared state and a live store, as data: the changes that `apply`
/// makes, in the order it makes them, and the change tags they were computed from.
///
/// Changes come in a stable order: zone creations, record creations and updates (parents before children),
/// shares, participants, public records, then deletions (public records, participants, records children
/// first, shares, zones). The applier writes a zone's record deletions before its saves and shares (see
/// `Applier`): saving or stopping a share rewrites the records of its hierarchy.
public struct Plan: Sendable, Hashable, Codable {
    /// The recipe's `name`.
    public var recipeName: String
    /// The store it was planned against (`Store.displayName`).
    public var storeName: String
    /// The owner whose private database holds the zones: handle, email and user record name.
    public var owner: PlannedUser
    /// The recipe's users; an empty record name marks one the store does not have yet, whom apply signs in
    /// (creating them) before it writes. Users are not changes: planning creates none, and a second apply
    /// finds them all.
    public var users: [PlannedUser]
    public var changes: [PlannedChange]
    /// Things left alone that a reader should know about ("3 undeclared records kept in FamilyLists;
    /// --prune deletes them").
    public var notes: [String]
    /// Acceptances the store cannot make because it cannot act as that user ("participant
    /// FamilyLists/bob: waiting for bob to accept").
    public var waiting: [String]
    /// The live state the plan was computed from, checked again before a saved plan is applied.
    public var basis: LiveBasis
    /// Who can see what in the recipe's zones before and after the plan; nil in plans saved before it was
    /// kept.
    public var access: PlanAccess?
    /// The schema changes made before the records; nil where the store keeps no schema (`cloudkit:`).
    public var schema: PlannedSchema?
    /// Declared `fires_once` subscriptions that exist as declared, so the plan leaves them alone; but the
    /// apply's own record writes may fire them, which removes them (CloudKit's firesOnce). Apply saves again
    /// those it finds gone after its writes, so that a second apply changes nothing. Nil when there are none.
    public var rearm: [PlannedSubscription]?
    /// The local files of the `!asset` values the changes save, by `ASSETID` text (`PATH#fnv1a64:HEX`, the
    /// digest of the bytes planned), as absolute paths: an `http:` or `cloudkit:` apply of a saved plan
    /// uploads them, and a file whose bytes changed since makes the plan stale. nil when there are none.
    public var assetFiles: [String: String]?
    /// The recipe's container and environment, which an `http:` or `cloudkit:` apply of a saved plan
    /// addresses; nil in plans saved before they were kept.
    public var container: String?
    public var environment: CloudKitEnvironment?
    /// The name templates of the records each `repeat:` made (`item-{{i:03}}`), by zone (`(public)` for the
    /// public database): the text and markdown renderings show such records as one line. nil when none.
    public var generatedNames: [String: [String]]?
    /// What the plan is against when it is not a live store (`plan --against`); never saved with the plan,
    /// which `plan --out` refuses to save.
    public var against: AgainstRecipe?
    /// The fields the recipe's schema declares `ENCRYPTED`, as `Type.field`; nil when none
    /// (`hidingEncryptedValues()`).
    public var encryptedFields: [String]?
    /// The owner of each zone the plan's owner does not own, by zone name: the handle of a user among
    /// `users`. Nil for a recipe with one owner.
    public var zoneOwners: [String: String]?
    /// What the plan's maker keeps for after its apply, by the handle of the owner whose part it is about: a
    /// plan made with a cache keeps what the cache records after the apply (`AfterApply`). Never saved with
    /// the plan.
    package var afterApply = AfterApplyByOwner()
    /// The zones the plan found in its owner's private database, when it listed them: a plan of several
    /// owners says which zone one owner's part declares that another owner's database holds too
    /// (`Planner.planOwners`). Never saved with the plan, and never compared: a plan read back from a file
    /// equals the plan written.
    package var listedZones = ListedZones()

    enum CodingKeys: String, CodingKey {
        case recipeName, storeName, owner, users, changes, notes, waiting, basis, access, schema, rearm
        case assetFiles, container, environment, generatedNames, zoneOwners
    }

    public init(
        recipeName: String, storeName: String, owner: PlannedUser,
        users: [PlannedUser] = [], changes: [PlannedChange], notes: [String] = [], waiting: [String] = [],
        basis: LiveBasis, access: PlanAccess? = nil
    ) {
        self.recipeName = recipeName
        self.storeName = storeName
        self.owner = owner
        self.users = users
        self.changes = changes
        self.notes = notes
        self.waiting = waiting
        self.basis = basis
        self.access = access
    }

    /// How many things the plan adds, changes and destroys.
    public var summary: PlanSummary {
        // One pass reading each action in place; a closure over each change would copy it.
        var summary = PlanSummary(add: 0, change: 0, destroy: 0)
        for index in changes.indices {
            switch changes[index].action {
            case .create: summary.add += 1
            case .update: summary.change += 1
            case .delete: summary.destroy += 1
            }
        }
        return summary
    }

    /// Whether applying the plan changes nothing.
    public var isEmpty: Bool { changes.isEmpty && schemaChanges.isEmpty }

    /// The store planned against, with the container and environment read: `sqlite:.sharelane/store.sqlite
    /// (iCloud.com.example.Lists, development)`.
    public var worldName: String {
        "\(storeName) (\(container.map { "\($0), " } ?? "")\((environment ?? .development).rawValue))"
    }

    /// The schema changes, first in the plan.
    public var schemaChanges: [SchemaChange] { schema?.changes ?? [] }
}

/// A user as a plan names it.
public struct PlannedUser: Sendable, Hashable, Codable {
    public var handle: String
    public var email: String?
    /// The display name the recipe gives.
    public var name: String?
    /// Empty for a user the store does not have yet.
    public var recordName: UserRecordName
    /// The recipe's `phone:` and `discoverable:`, which apply sets where the store acts as any user; nil
    /// where the recipe does not say.
    public var phone: String?
    public var discoverable: Bool?

    public init(
        handle: String, email: String?, name: String? = nil, recordName: UserRecordName, phone: String? = nil,
        discoverable: Bool? = nil
    ) {
        self.handle = handle
        self.email = email
        self.name = name
        self.recordName = recordName
        self.phone = phone
        self.discoverable = discoverable
    }

    /// Whether apply must sign the user in, creating them, before it writes.
    public var isNew: Bool { recordName.isEmpty }
}

/// The names of the zones a plan found in its owner's private database (`Plan.listedZones`); nil when it did
/// not list them.
package struct ListedZones: Sendable {
    package var names: Set<String>?
}

// What a plan found while it read is not the plan: `Plan`'s equality leaves it out, as it does
// `afterApply`.
extension ListedZones: Hashable {
    package static func == (lhs: ListedZones, rhs: ListedZones) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}
