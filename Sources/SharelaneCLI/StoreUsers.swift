import Recipe
import ShareKit
import ShareStoreSQLite
import SharingReport

/// The users a command that reads a whole store reads as: every user of a local store, or the recipe's users
/// that an `http:` or `cloudkit:` store has (such a store cannot list its users). Signs no one in.
enum StoreUsers {
    /// The users, with the recipe's handles where the recipe names them.
    /// - Throws: `CommandFailure` when a remote store is read without a recipe.
    /// - Parameter asking: an email address `--as` names, read too when the recipe does not name it.
    static func list(in store: any Store, recipe: Recipe?, asking: String? = nil) async throws -> [SharingUser] {
        let users: [User]
        if let local = store as? any UserListing {
            users = try await local.allUsers()
        } else {
            // The user `--as` names first, then the owner: on `cloudkit:`, which acts only as the user its token
            // signs in, an address it cannot tell apart from that user's is that user, who is read once, as the
            // first address that reaches them.
            var emails = (recipe?.users ?? []).sorted { a, _ in a.handle == recipe?.owner }.map(\.email)
            if let asking, asking.contains("@") {
                emails.removeAll { EmailAddress.normalized($0) == EmailAddress.normalized(asking) }
                emails.insert(asking, at: 0)
            }
            guard !emails.isEmpty else {
                throw CommandFailure.usage(
                    "\(store.displayName) cannot list its users: name one with --as EMAIL, or pass --recipe FILE to read the recipe's users"
                )
            }
            var found: [User] = []
            var refused: ShareError?
            for email in emails {
                do {
                    if let user = try await store.signInExisting(email: email),
                        !found.contains(where: { $0.recordName == user.recordName })
                    {
                        found.append(user)
                    }
                } catch let error as ShareError
                    where [.authenticationFailed, .authenticationRequired].contains(error.code)
                {
                    // Another user than the one the store acts as: what they see is theirs to read.
                    refused = refused ?? error
                }
            }
            if found.isEmpty, let refused { throw refused }
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
    static func snapshot(of store: any Store, recipe: Recipe?, asking: String? = nil) async throws -> SharingSnapshot {
        let users = try await list(in: store, recipe: recipe, asking: asking)
        do {
            return try await SharingSnapshotReader(store: store).read(users: users)
        } catch {
            throw CommandFailure.store("cannot read the shares of \(store.displayName): \(error)")
        }
    }
}
