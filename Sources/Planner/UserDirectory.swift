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
    public var entries: [Entry]
    /// The owner's handle.
    public var ownerHandle: String

    public init(entries: [Entry], ownerHandle: String) {
        self.entries = entries
        self.ownerHandle = ownerHandle
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
        guard let owner = recipe.user(recipe.owner) else { throw PlannerError.unknownUser(handle: recipe.owner) }
        var entries: [Entry] = []
        if store.capabilities.actsAsAnyUser {
            // `parallelism` sign-ins at a time: over `http:` each is a request of its own (as many as an apply's).
            var recordNames = [UserRecordName?](repeating: nil, count: recipe.users.count)
            let users = recipe.users
            let limit = Parallelism.calls(parallelism, for: store, localLimit: Applier.localUsersInFlight)
            try await BoundedTasks.run(Array(users.indices), limit: limit) { index in
                await BoundedTasks.result {
                    create
                        ? try await signIn(users[index], store: store) : try await existing(users[index], store: store)
                }
            } receive: { (index, result) throws(any Error) in
                recordNames[index] = try result.get()
            }
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
            for user in recipe.users {
                if user.handle == owner.handle {
                    entries.append(
                        Entry(handle: user.handle, email: user.email, name: user.name, recordName: ownerRecord))
                } else {
                    let index = others.firstIndex { $0.handle == user.handle }
                    let record = index.flatMap { $0 < found.count ? found[$0] : nil }
                    if record == nil { logger.info("no account found for \(user.handle) (\(user.email))") }
                    entries.append(
                        Entry(handle: user.handle, email: user.email, name: user.name, recordName: record?.recordName))
                }
            }
        }
        return UserDirectory(entries: entries, ownerHandle: owner.handle)
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
        // `phone:` and `discoverable:` are the user's own settings: set on sign-in where the recipe says them
        // and the store acts as any user (on Apple's service each user chooses them in an app).
        if store.capabilities.actsAsAnyUser, user.phone != nil || user.discoverable != nil {
            do {
                try await store.setDiscoverability(
                    UserDiscoverability(phone: user.phone, discoverable: user.discoverable ?? false), as: recordName)
            } catch let error as ShareError {
                throw PlannerError.storeFailed(
                    operation: "setting the phone number and discoverability of \(user.handle)", subject: user.email,
                    error)
            }
        }
        return recordName
    }

    /// The owner's entry.
    public var owner: Entry {
        entries.first { $0.handle == ownerHandle } ?? Entry(handle: ownerHandle, email: "", name: nil, recordName: nil)
    }

    /// The owner's user record name.
    /// - Throws: `PlannerError.userNotFound` when the store has no account for the owner.
    public func ownerRecordName() throws -> UserRecordName { try recordName(of: ownerHandle) }

    /// The user record name of `handle`.
    /// - Throws: `PlannerError` when the handle is unknown or has no account in the store.
    public func recordName(of handle: String) throws -> UserRecordName {
        guard let entry = entries.first(where: { $0.handle == handle }) else {
            throw PlannerError.unknownUser(handle: handle)
        }
        guard let record = entry.recordName else {
            throw PlannerError.userNotFound(handle: handle, email: entry.email)
        }
        return record
    }

    /// The entry of `handle`, if the recipe names it.
    public func entry(handle: String) -> Entry? { entries.first { $0.handle == handle } }

    /// The handle of the user with this record name, if the recipe names them.
    public func handle(of recordName: UserRecordName) -> String? {
        entries.first { $0.recordName == recordName }?.handle
    }
}
