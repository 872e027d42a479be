import Foundation

// MARK: - Signing users in

extension Store {
    /// One user after another, for stores that act as one user a call.
    public func signIn(_ users: [UserSignIn]) async throws -> [Result<User, ShareError>] {
        try await signInOneByOne(users)
    }

    /// One user after another, for stores that act as one user a call.
    public func signInExisting(_ emails: [String]) async throws -> [Result<User?, ShareError>] {
        try await signInExistingOneByOne(emails)
    }

    /// `signIn(_:)` as one `signIn(email:name:)` after another: the default, and what a store that signs many
    /// in at once on one service does on another.
    public func signInOneByOne(_ users: [UserSignIn]) async throws -> [Result<User, ShareError>] {
        var results: [Result<User, ShareError>] = []
        results.reserveCapacity(users.count)
        for user in users {
            do {
                results.append(.success(try await signIn(email: user.email, name: user.name)))
            } catch let error as ShareError {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// `signInExisting(_:)` as one `signInExisting(email:)` after another (see `signInOneByOne(_:)`).
    public func signInExistingOneByOne(_ emails: [String]) async throws -> [Result<User?, ShareError>] {
        var results: [Result<User?, ShareError>] = []
        results.reserveCapacity(emails.count)
        for email in emails {
            do {
                results.append(.success(try await signInExisting(email: email)))
            } catch let error as ShareError {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// None: a store holding no sessions acts as any user it has, or only as its signed-in user.
    public func needingSignIn(_ users: [UserRecordName]) async -> Set<UserRecordName> { [] }

    /// The addresses alone, for stores with nothing to ready for a user's calls.
    public func signInExisting(_ users: [UserSignIn]) async throws -> [Result<User?, ShareError>] {
        try await signInExisting(users.map(\.email))
    }
}
