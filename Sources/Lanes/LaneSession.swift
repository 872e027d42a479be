import Logging
import Planner
import Recipe
import ShareKit

/// The state of one lane run: the store, the recipe in force, and the users signed in so far.
///
/// Recipes name people by handle and zones by name; the session turns those into the store's user record
/// names and zone IDs, as CloudKit addresses them from each user's point of view.
final class LaneSession {
    let store: any Store
    let logger: Logger
    private var directories: [String: UserDirectory] = [:]
    /// Each user's notification channel, opened by their first `subscribe` step.
    var channels: [UserRecordName: NotificationChannel] = [:]
    /// Notifications received and not yet checked, per user.
    var received: [UserRecordName: [SubscriptionNotification]] = [:]

    init(store: any Store, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The recipe's users as the store knows them, signed in once per run (again only if parameters
    /// changed who the users are).
    func directory(for recipe: Recipe, at location: SourceLocation) async throws -> UserDirectory {
        let key = recipe.owner + "|" + recipe.users.map { "\($0.handle)=\($0.email)" }.joined(separator: ",")
        if let known = directories[key] { return known }
        do {
            let directory = try await UserDirectory.signIn(recipe, store: store, logger: logger)
            directories[key] = directory
            return directory
        } catch {
            throw LaneError.stepFailed(
                action: "signing in the recipe's users", reason: "\(error) (store \(store.displayName))",
                location: location)
        }
    }

    /// The handles of the users signed in so far, by user record name and by email (`serve` names the user
    /// it answers by email in a refusal), to write messages with handles alike on every store.
    var handles: [String: String] {
        var result: [String: String] = [:]
        for directory in directories.values {
            for entry in directory.entries {
                if let recordName = entry.recordName { result[recordName] = entry.handle }
                if !entry.email.isEmpty { result[entry.email] = entry.handle }
            }
        }
        return result
    }

    /// The store's user for a recipe handle.
    func user(_ handle: String, in recipe: Recipe, at location: SourceLocation) async throws -> User {
        guard recipe.user(handle) != nil else {
            throw LaneError.unknownUser(handle: handle, location: location)
        }
        let directory = try await directory(for: recipe, at: location)
        guard let entry = directory.entry(handle: handle), let recordName = entry.recordName else {
            throw LaneError.stepFailed(
                action: "acting as \(handle)",
                reason: "\(store.displayName) has no account for \(handle) (\(recipe.user(handle)?.email ?? "")) "
                    + "and cannot act as other users; run this lane on a local store (sqlite:, memory:) or a sharelane serve",
                location: location)
        }
        return User(recordName: recordName, email: entry.email, name: entry.name)
    }

    /// The user a step acts as: its `as:`, or the recipe's owner.
    func actor(of step: Step, in recipe: Recipe) async throws -> (handle: String, user: User) {
        let handle = step.actor ?? recipe.owner
        return (handle, try await user(handle, in: recipe, at: step.location))
    }

    /// The owner of the recipe's zones.
    func owner(ofZone zone: String?, in recipe: Recipe, at location: SourceLocation) async throws -> User {
        try await user(zone.map(recipe.owner(ofZone:)) ?? recipe.owner, in: recipe, at: location)
    }

    /// Where `actor` reaches the owner's zone: the owner in its private database, anyone else in its shared
    /// database, under the owner's real record name (as CloudKit's shared database names the zone).
    func place(ofZone zone: String, for actor: User, owner: User) -> (database: DatabaseScope, zoneID: ZoneID) {
        if actor.recordName == owner.recordName {
            return (.private, ZoneID(zoneName: zone))
        }
        return (.shared, ZoneID(zoneName: zone, ownerRecordName: owner.recordName))
    }

    /// A record as the owner sees it, or nil when it does not exist.
    func ownerRecord(_ name: String, zone: String, owner: User) async throws -> Record? {
        let outcomes = try await store.lookupRecords(
            [name], in: ZoneID(zoneName: zone), database: .private, as: owner.recordName)
        switch outcomes.first {
        case .saved(let record): return record
        case .failed(_, let error) where error.code == .notFound || error.code == .zoneNotFound: return nil
        case .failed(_, let error): throw error
        default: return nil
        }
    }

    /// A share as the owner sees it, or nil when it does not exist.
    func ownerShare(_ recordName: String, zone: String, owner: User) async throws -> Share? {
        let outcomes = try await store.lookupRecords(
            [recordName], in: ZoneID(zoneName: zone), database: .private, as: owner.recordName)
        switch outcomes.first {
        case .savedShare(let share): return share
        case .failed(_, let error) where error.code == .notFound || error.code == .zoneNotFound: return nil
        case .failed(_, let error): throw error
        default: return nil
        }
    }

    /// The share a step names: the zone-wide share of `zone`, or the share rooted at `record`, read as the
    /// owner (who always sees it, with its URL and participants).
    func namedShare(zone: String, record: String?, owner: User, at location: SourceLocation) async throws -> Share {
        if let record {
            guard let root = try await ownerRecord(record, zone: zone, owner: owner) else {
                throw LaneError.shareNotFound(
                    what: "record \(zone)/\(record) does not exist in the owner's private database",
                    hint: "apply the recipe first (a step `- apply`), or check the zone and record names",
                    location: location)
            }
            guard let shareName = root.shareRecordName,
                let share = try await ownerShare(shareName, zone: zone, owner: owner)
            else {
                throw LaneError.shareNotFound(
                    what: "record \(zone)/\(record) is not the root of a share",
                    hint: "declare `share:` under that record and apply, or name the zone alone for a zone-wide share",
                    location: location)
            }
            return share
        }
        guard let share = try await ownerShare(zoneShareRecordName, zone: zone, owner: owner) else {
            throw LaneError.shareNotFound(
                what: "zone \(zone) has no zone-wide share",
                hint:
                    "declare `share:` under the zone and apply, or add `record:` to name the root of a hierarchy share",
                location: location)
        }
        return share
    }

    /// The share that covers a zone, or a record in it, as the owner sees it: the zone-wide share, or the
    /// share of the nearest record up the record's parent chain. Nil when nothing shares it.
    func coveringShare(zone: String, record: String?, owner: User) async throws -> (share: Share?, rootRecord: String?)
    {
        if let zoneShare = try await ownerShare(zoneShareRecordName, zone: zone, owner: owner) {
            return (zoneShare, nil)
        }
        var next = record
        var seen: Set<String> = []
        while let name = next, !seen.contains(name) {
            seen.insert(name)
            guard let current = try await ownerRecord(name, zone: zone, owner: owner) else { return (nil, nil) }
            if let shareName = current.shareRecordName {
                return (try await ownerShare(shareName, zone: zone, owner: owner), name)
            }
            next = current.parent
        }
        return (nil, nil)
    }
}
