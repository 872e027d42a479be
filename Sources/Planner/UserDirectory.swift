import Applier
import Foundation
import PlanModel
import Synchronization
import Logging
import Recipe
import ShareKit

/// The recipe's users as the store knows them: handle ↔ user record name.
///
/// Built by signing in each user the recipe names (on stores that act as any user), or, on a store that
/// acts only as the signed-in owner, by looking the others up by email address.
public struct UserDirectory: Sendable, Hashable, Codable {
    /// One user: the recipe's handle, and the store's user.
    public struct Entry: Sendable, Hashable, Codable {
        public var handle: String
        public var email: String
        public var name: String?
        /// nil when the store has no account for this email (only on stores that cannot create users).
        public var recordName: UserRecordName?

        public init(handle: String, email: String, name: String?, recordName: UserRecordName?) {
            self.handle = handle
            self.email = email
            self.name = name
            self.recordName = recordName
        }
    }

    /// The users, in the recipe's order.
    public let entries: [Entry]
    /// The owner's handle.
    public let ownerHandle: String
    /// The owner's position in `entries`, found once: every plan asks for the owner, often.
    private let ownerPosition: Int?
    /// Positions by handle and by record name, made on the first lookup and shared by the copies (`entries`
    /// never changes): a plan asks for the user of each participant, and a scan of the users for each was
    /// users × participants. Not made up front: a plan of 100,000 users that shares with none of them never
    /// asks, and making them was a seventh of its no-op plan.
    private let positions = Positions()

    public init(entries: [Entry], ownerHandle: String) {
        self.entries = entries
        self.ownerHandle = ownerHandle
        ownerPosition = entries.firstIndex { $0.handle == ownerHandle }
    }

    /// The directory with the record names `recordName` gives the users who have none yet (the users an
    /// apply signed in).
    public func filling(_ recordName: (Entry) -> UserRecordName?) -> UserDirectory {
        var filled = entries
        for index in filled.indices where filled[index].recordName == nil {
            filled[index].recordName = recordName(filled[index])
        }
        return UserDirectory(entries: filled, ownerHandle: ownerHandle)
    }

    /// Signs in the recipe's users: every one where the store acts as any user (creating the users it does
    /// not have), otherwise the owner, with the others looked up by email.
    /// - Throws: `PlannerError` when the owner is not among the users or the store refuses.
    public static func signIn(
        _ recipe: Recipe, store: any Store, logger: Logger, parallelism: Int = Parallelism.default
    ) async throws -> UserDirectory {
        try await make(recipe, store: store, logger: logger, create: true, parallelism: parallelism)
    }

    /// The recipe's users as the store has them, creating none: a user the store does not have yet has no
    /// record name (apply creates it). Plans use this: a plan changes nothing.
    /// - Throws: `PlannerError` when the owner is not among the users or the store refuses.
    public static func lookUp(
        _ recipe: Recipe, store: any Store, logger: Logger, parallelism: Int = Parallelism.default
    ) async throws -> UserDirectory {
        try await make(recipe, store: store, logger: logger, create: false, parallelism: parallelism)
    }

    private static func make(_ recipe: Recipe, store: any Store, logger: Logger, create: Bool, parallelism: Int)
        async throws -> UserDirectory
    {
        guard var owner = recipe.user(recipe.owner) else { throw PlannerError.unknownUser(handle: recipe.owner) }
        // The other owners a store that acts only as its signed-in user (cloudkit:) can act as too: each signed
        // in with a token of their own.
        var otherOwners: [DeclaredUser] = []
        if !store.capabilities.actsAsAnyUser, recipe.hasSeveralOwners {
            // The directory's owner is the first of the recipe's owners the store can act as.
            var found: DeclaredUser?
            for handle in recipe.owners {
                guard let user = recipe.user(handle), await store.canActAs(email: user.email) else { continue }
                if found == nil { found = user } else { otherOwners.append(user) }
            }
            owner = found ?? owner
        }
        var entries: [Entry] = []
        entries.reserveCapacity(recipe.users.count)
        if store.capabilities.actsAsAnyUser {
            let recordNames =
                store.capabilities.signsInTogether
                ? try await together(
                    recipe.users, store: store, create: create, owner: owner.handle, ownerCalls: parallelism)
                : try await oneByOne(recipe.users, store: store, create: create, parallelism: parallelism)
            for (user, recordName) in zip(recipe.users, recordNames) {
                entries.append(Entry(handle: user.handle, email: user.email, name: user.name, recordName: recordName))
            }
        } else {
            let ownerRecord = try await signIn(owner, store: store)
            let others = recipe.users.filter { $0.handle != owner.handle }
            var found: [User?] = []
            if !others.isEmpty {
                do {
                    found = try await store.lookupUsers(emails: others.map(\.email), as: ownerRecord)
                } catch let error as ShareError {
                    throw PlannerError.storeFailed(operation: "looking up users", subject: store.displayName, error)
                }
            }
            var ownersRecords: [String: UserRecordName] = [:]
            for other in otherOwners { ownersRecords[other.handle] = try await signIn(other, store: store) }
            // `others` is `recipe.users` without the owner, in order: one pass walks both.
            var next = 0
            for user in recipe.users {
                if let record = ownersRecords[user.handle] {
                    next += 1
                    entries.append(Entry(handle: user.handle, email: user.email, name: user.name, recordName: record))
                } else if user.handle == owner.handle {
                    entries.append(
                        Entry(handle: user.handle, email: user.email, name: user.name, recordName: ownerRecord))
                } else {
                    let record = next < found.count ? found[next] : nil
                    next += 1
                    if record == nil {
                        // Not discoverable, or no account yet: shares invite them by email all the same.
                        logger.debug("\(user.handle) (\(user.email)) is not discoverable: invited by email")
                    }
                    entries.append(
                        Entry(handle: user.handle, email: user.email, name: user.name, recordName: record?.recordName))
                }
            }
        }
        return UserDirectory(entries: entries, ownerHandle: owner.handle)
    }

    /// Every user in one store call, where the store signs many in at once (`signsInTogether`): one
    /// transaction or 50 requests for 10,000 users rather than 10,000 (`signIn(_:)`, `signInExisting(_:)`).
    /// The owner readied for `ownerCalls` at once (`UserSignIn.calls`): a plan reads the store as them, several
    /// reads at once, and over `http:` each needs a token chain of its own.
    private static func together(
        _ users: [DeclaredUser], store: any Store, create: Bool, owner: String, ownerCalls: Int
    ) async throws -> [UserRecordName?] {
        guard !users.isEmpty else { return [] }
        let signIns = users.map {
            UserSignIn(email: $0.email, name: $0.name, calls: $0.handle == owner ? ownerCalls : 1)
        }
        var recordNames: [UserRecordName?] = []
        recordNames.reserveCapacity(users.count)
        do {
            if create {
                let results = try await store.signIn(signIns)
                for (user, result) in zip(users, results) {
                    switch result {
                    case .success(let signedIn): recordNames.append(signedIn.recordName)
                    case .failure(let error):
                        throw PlannerError.storeFailed(
                            operation: "signing in as \(user.handle)", subject: user.email, error)
                    }
                }
                for (user, recordName) in zip(users, recordNames) {
                    if let recordName { try await setDiscoverability(of: user, recordName, store: store) }
                }
            } else {
                let results = try await store.signInExisting(signIns)
                for (user, result) in zip(users, results) {
                    switch result {
                    case .success(let found): recordNames.append(found?.recordName)
                    case .failure(let error):
                        throw PlannerError.storeFailed(
                            operation: "looking up \(user.handle)", subject: user.email, error)
                    }
                }
            }
        } catch let error as ShareError {
            throw PlannerError.storeFailed(
                operation: create ? "signing in users" : "looking up users", subject: store.displayName, error)
        }
        guard recordNames.count == users.count else {
            throw PlannerError.storeFailed(
                operation: create ? "signing in users" : "looking up users", subject: store.displayName,
                ShareError(.internalError, "the store answered \(recordNames.count) of \(users.count) users"))
        }
        return recordNames
    }

    /// One user a call, `parallelism` at a time: over `http:` each is a request of its own (as many as an
    /// apply's).
    private static func oneByOne(_ users: [DeclaredUser], store: any Store, create: Bool, parallelism: Int)
        async throws -> [UserRecordName?]
    {
        var recordNames = [UserRecordName?](repeating: nil, count: users.count)
        let limit = Parallelism.calls(parallelism, for: store, localLimit: Applier.localUsersInFlight)
        try await BoundedTasks.run(Array(users.indices), limit: limit) { index in
            await BoundedTasks.result {
                create ? try await signIn(users[index], store: store) : try await existing(users[index], store: store)
            }
        } receive: { (index, result) throws(any Error) in
            recordNames[index] = try result.get()
        }
        return recordNames
    }

    private static func existing(_ user: DeclaredUser, store: any Store) async throws -> UserRecordName? {
        do {
            return try await store.signInExisting(email: user.email)?.recordName
        } catch let error as ShareError {
            throw PlannerError.storeFailed(operation: "looking up \(user.handle)", subject: user.email, error)
        }
    }

    private static func signIn(_ user: DeclaredUser, store: any Store) async throws -> UserRecordName {
        let recordName: UserRecordName
        do {
            recordName = try await store.signIn(email: user.email, name: user.name).recordName
        } catch let error as ShareError {
            throw PlannerError.storeFailed(operation: "signing in as \(user.handle)", subject: user.email, error)
        }
        try await setDiscoverability(of: user, recordName, store: store)
        return recordName
    }

    /// `phone:` and `discoverable:` are the user's own settings: set on sign-in where the recipe says them
    /// and the store acts as any user (on Apple's service each user chooses them in an app).
    private static func setDiscoverability(of user: DeclaredUser, _ recordName: UserRecordName, store: any Store)
        async throws
    {
        guard store.capabilities.actsAsAnyUser, user.phone != nil || user.discoverable != nil else { return }
        do {
            try await store.setDiscoverability(
                UserDiscoverability(phone: user.phone, discoverable: user.discoverable ?? false), as: recordName)
        } catch let error as ShareError {
            throw PlannerError.storeFailed(
                operation: "setting the phone number and discoverability of \(user.handle)", subject: user.email,
                error)
        }
    }

    /// The owner's entry.
    public var owner: Entry {
        ownerPosition.map { entries[$0] } ?? Entry(handle: ownerHandle, email: "", name: nil, recordName: nil)
    }

    /// The owner's entry, when the directory lists the owner.
    var listedOwner: Entry? { ownerPosition.map { entries[$0] } }

    /// The owner's user record name.
    /// - Throws: `PlannerError.userNotFound` when the store has no account for the owner.
    public func ownerRecordName() throws -> UserRecordName { try recordName(of: ownerHandle) }

    /// The user record name of `handle`.
    /// - Throws: `PlannerError` when the handle is unknown or has no account in the store.
    public func recordName(of handle: String) throws -> UserRecordName {
        guard let entry = entry(handle: handle) else { throw PlannerError.unknownUser(handle: handle) }
        guard let record = entry.recordName else {
            throw PlannerError.userNotFound(handle: handle, email: entry.email)
        }
        return record
    }

    /// The entry of `handle`, if the recipe names it.
    public func entry(handle: String) -> Entry? {
        positions.ofHandle(handle, in: entries).map { entries[$0] }
    }

    /// The handle of the user with this record name, if the recipe names them.
    public func handle(of recordName: UserRecordName) -> String? {
        positions.ofRecordName(recordName, in: entries).map { entries[$0].handle }
    }

    /// `UserDirectory.positions`: the first entry of each handle and record name, as a scan from the start
    /// finds it.
    private final class Positions: Sendable {
        private let byHandle = Mutex<[String: Int]?>(nil)
        private let byRecordName = Mutex<[UserRecordName: Int]?>(nil)

        func ofHandle(_ handle: String, in entries: [Entry]) -> Int? {
            byHandle.withLock { byHandle in
                if byHandle == nil {
                    var made: [String: Int] = [:]
                    made.reserveCapacity(entries.count)
                    for (position, entry) in entries.enumerated() where made[entry.handle] == nil {
                        made[entry.handle] = position
                    }
                    byHandle = made
                }
                return byHandle?[handle]
            }
        }

        func ofRecordName(_ recordName: UserRecordName, in entries: [Entry]) -> Int? {
            byRecordName.withLock { byRecordName in
                if byRecordName == nil {
                    var made: [UserRecordName: Int] = [:]
                    made.reserveCapacity(entries.count)
                    for (position, entry) in entries.enumerated() {
                        if let name = entry.recordName, made[name] == nil { made[name] = position }
                    }
                    byRecordName = made
                }
                return byRecordName?[recordName]
            }
        }
    }
}

// MARK: - Equatable, Hashable

extension UserDirectory {
    /// The same users in the same order with the same owner (the positions follow from them).
    public static func == (lhs: UserDirectory, rhs: UserDirectory) -> Bool {
        lhs.ownerHandle == rhs.ownerHandle && lhs.entries == rhs.entries
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ownerHandle)
        hasher.combine(entries)
    }
}

// MARK: - Codable

extension UserDirectory {
    private enum CodingKeys: String, CodingKey {
        case entries, ownerHandle
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            entries: try container.decode([Entry].self, forKey: .entries),
            ownerHandle: try container.decode(String.self, forKey: .ownerHandle))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entries, forKey: .entries)
        try container.encode(ownerHandle, forKey: .ownerHandle)
    }
}
