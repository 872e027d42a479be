import ArgumentParser
import Recipe
import ShareKit
import SharingReport

/// Who `--as` names, in every command that takes it: a handle of the recipe (`bob`), an email address in
/// any case and with white space around it (`EmailAddress` decides which spellings are one address), or a
/// user record name (`_7d1f…`). One reading, and one message for a name that names nobody.
struct UserArgument: ExpressibleByArgument, Sendable, Hashable, CustomStringConvertible {
    /// What was given, without the white space at its ends.
    let text: String

    init?(argument: String) {
        let trimmed = WhiteSpace.trimmed(argument)
        guard !trimmed.isEmpty else { return nil }
        text = trimmed
    }

    init(_ text: String) { self.text = WhiteSpace.trimmed(text) }

    var description: String { text }

    /// Whether it is written as an email address (it holds an `@`, which neither handles nor record names do).
    var isEmail: Bool { text.contains("@") }

    /// The recipe's user it names: by handle, or by email address.
    func declared(in recipe: Recipe?) -> DeclaredUser? {
        guard let recipe else { return nil }
        if isEmail {
            let address = EmailAddress.normalized(text)
            return recipe.users.first { EmailAddress.normalized($0.email) == address }
        }
        return recipe.user(text)
    }

    /// The email address it names: itself when written as one, else the address of the recipe's user with
    /// this handle; nil for a user record name.
    func email(in recipe: Recipe?) -> String? {
        isEmail ? EmailAddress.normalized(text) : declared(in: recipe).map { EmailAddress.normalized($0.email) }
    }

    /// Whether it names `user`: by handle, by email address or by user record name.
    func names(_ user: SharingUser) -> Bool { user.isNamed(text) }

    /// The user of `store` it names, found without creating anyone.
    /// - Throws: `CommandFailure`, `unknown`'s when the store has no such user.
    /// - Parameter hint: what to add to a "no user" failure (the store's other worlds, `WorldOptions`).
    func user(in store: any Store, recipe: Recipe?, hint: String = "") async throws -> User {
        if let email = email(in: recipe) {
            let found: User?
            do {
                found = try await store.signInExisting(email: email)
            } catch {
                throw CommandFailure.store("cannot sign in to \(store.displayName) as \(email): \(error)")
            }
            guard let found else { throw unknown(in: store.displayName + hint, recipe: recipe) }
            return found
        }
        do {
            return try await store.currentUser(as: text)
        } catch let error as ShareError
            where [.authenticationFailed, .authenticationRequired, .notFound].contains(error.code)
        {
            // The store knows no such user, or holds no token to act as them: either way it names nobody here.
            throw unknown(in: store.displayName + hint, recipe: recipe)
        } catch {
            throw CommandFailure.store("cannot read user \(text) in \(store.displayName): \(error)")
        }
    }

    /// The one failure for a name that names no user of `place`, saying what `--as` takes (the recipe's
    /// handles among them), or that the recipe's user has no account there yet.
    func unknown(in place: String, recipe: Recipe?) -> CommandFailure {
        if let declared = declared(in: recipe) {
            return CommandFailure.input(
                "no user '\(text)' in \(place): it has no account for \(declared.handle) (\(declared.email)) yet; "
                    + "apply the recipe first")
        }
        let handles = recipe.map { " (\($0.users.map(\.handle).joined(separator: ", ")))" } ?? ""
        return CommandFailure.input(
            "no user '\(text)' in \(place): --as takes a handle of the recipe\(handles), an email address or a user "
                + "record name")
    }
}
