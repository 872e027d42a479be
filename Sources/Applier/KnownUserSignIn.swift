import ShareKit

/// Signing in again the users a command acts as that the store already has, where this process holds no
/// sign-in for them: a plan made from the cache file signs in the owner alone (the other users are known from
/// the file), and over `http:` each user acted as needs a web auth token of their own (`Store.needingSignIn`).
/// The one place a plan or an apply readies such users, before the first call as them.
package enum KnownUserSignIn {
    /// A user to act as: the recipe's handle, the address to sign in with, the record name the plan knows.
    package struct Known: Sendable, Hashable {
        package var handle: String
        package var email: String
        package var recordName: UserRecordName

        package init(handle: String, email: String, recordName: UserRecordName) {
            self.handle = handle
            self.email = email
            self.recordName = recordName
        }
    }

    /// Signs in, creating nothing, those of `users` the store cannot act as yet, all in one call (200 a
    /// request over `http:`). Nil when every one can be acted as, otherwise why not: the store could not be
    /// reached, or a user is no longer the one the plan knows (the store was made again: plan again).
    package static func ready(_ users: [Known], store: any Store) async -> String? {
        var seen = Set<UserRecordName>()
        let distinct = users.filter {
            !$0.recordName.isEmpty && !$0.email.isEmpty && seen.insert($0.recordName).inserted
        }
        guard !distinct.isEmpty else { return nil }
        let lacking = await store.needingSignIn(distinct.map(\.recordName))
        let toSignIn = distinct.filter { lacking.contains($0.recordName) }
        guard !toSignIn.isEmpty else { return nil }
        let results: [Result<User?, ShareError>]
        do {
            results = try await store.signInExisting(toSignIn.map { UserSignIn(email: $0.email, name: nil) })
        } catch {
            return "signing in \(toSignIn[0].handle) (\(toSignIn[0].email)) again failed: \(error)"
        }
        for (position, user) in toSignIn.enumerated() {
            let result: Result<User?, ShareError> =
                position < results.count
                ? results[position] : .failure(ShareError(.internalError, "the store answered no result"))
            switch result {
            case .success(let found?) where found.recordName == user.recordName:
                continue
            case .success:
                return "user \(user.handle) (\(user.email)) is no longer the user the plan knows in "
                    + "\(store.displayName): plan again"
            case .failure(let error):
                return "signing in \(user.handle) (\(user.email)) again failed: \(error)"
            }
        }
        return nil
    }
}
