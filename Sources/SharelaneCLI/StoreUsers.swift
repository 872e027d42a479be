import Recipe
import ShareKit
import ShareStoreSQLite
import SharingReport

/// The users a command that reads a whole store reads as: every user of a local store, or the recipe's users
/// that an `http:` or `cloudkit:` store has (such a store cannot list its users). Signs no one in.
enum StoreUsers {
    /// The users, with the recipe's handles where the recipe names them.
    /// - Throws: `CLIFailure` when a remote store is read without a recipe.
    static func list(in store: any Store, recipe: Recipe?) async throws -> [SharingUser] {
        let users: [User]
        if let local = store as? SQLiteStore {
            users = try await local.allUsers()
        } else {
            guard let recipe else {
                throw CLIFailure(
                    "\(store.displayName) cannot list its users: name one with --as EMAIL, or pass --recipe FILE to read the recipe's users"
                )
            }
            var found: [User] = []
            for declared in recipe.users {
                if let user = try await store.signInExisting(email: declared.email) { found.append(user) }
            }
            users = found
        }
        let handles = Dictionary(
            (recipe?.users ?? []).map { (EmailAddress.normalized($0.email), $0.handle) },
            uniquingKeysWith: { a, _ in a })
        return users.map { user in
            SharingUser(
                recordName: user.recordName, email: user.email, name: user.name,
                handle: user.email.flatMap { handles[EmailAddress.normalized($0)] })
        }
    }

    /// The snapshot of every share the users own, or a failure naming the store.
    static func snapshot(of store: any Store, recipe: Recipe?) async throws -> SharingSnapshot {
        let users = try await list(in: store, recipe: recipe)
        do {
            return try await SharingSnapshotReader(store: store).read(users: users)
        } catch {
            throw CLIFailure("cannot read the shares of \(store.displayName): \(error)")
        }
    }
}
