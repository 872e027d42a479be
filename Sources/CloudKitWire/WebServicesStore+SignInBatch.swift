import ShareKit

// MARK: - Many users signed in at once

extension WebServicesStore {
    /// On the emulator, 200 users a request (`POST /auth/signin/batch`), the requests under way together;
    /// each user signed in starts a token chain as a sign-in of their own does. On Apple's service, which
    /// signs in only its one user, one after another.
    /// A user who means to make several calls at once (`UserSignIn.calls`) is signed in once more for each
    /// further call, up to the store's chains a user, in the same requests: a token chain each.
    public func signIn(_ users: [UserSignIn]) async throws -> [Result<User, ShareError>] {
        guard endpoint.kind == .emulator else { return try await signInOneByOne(users) }
        return try await signInBatches(users, createUser: nil).map { result in
            result.flatMap { found in
                found.map(Result.success)
                    ?? .failure(ShareError(.internalError, "a sign-in that creates users found none"))
            }
        }
    }

    /// On the emulator, 200 addresses a request with `createUser: false`: an address nobody has is nil. On
    /// Apple's service, one after another.
    public func signInExisting(_ emails: [String]) async throws -> [Result<User?, ShareError>] {
        try await signInExisting(emails.map { UserSignIn(email: $0) })
    }

    /// `signInExisting(_:)`, a user found signed in again in the same requests for each further call they
    /// mean to make at once, as `signIn(_:)` does.
    public func signInExisting(_ users: [UserSignIn]) async throws -> [Result<User?, ShareError>] {
        guard endpoint.kind == .emulator else { return try await signInExistingOneByOne(users.map(\.email)) }
        return try await signInBatches(users, createUser: false)
    }

    /// The users as the batches carry them: each once, in order, then again for each further call of theirs
    /// (`UserSignIn.calls`, up to the store's chains a user).
    private func signInBatches(_ users: [UserSignIn], createUser: Bool?) async throws -> [Result<User?, ShareError>] {
        var people = users.map { SignInBatchRequest.Person(emailAddress: $0.email, name: $0.name) }
        for user in users where user.calls > 1 {
            let person = SignInBatchRequest.Person(emailAddress: user.email, name: user.name)
            people += repeatElement(person, count: min(user.calls, sessions.chainsPerUser) - 1)
        }
        return Array(
            try await signInBatches(people, createUser: createUser, chainsFrom: users.count).prefix(users.count))
    }

    /// One result a person, in order: the user signed in (their token kept), nil for an address the emulator
    /// does not have when `createUser` is false, or that person's error. The people from `chainsFrom` on sign
    /// in again someone before them: their tokens start further chains of that user.
    private func signInBatches(_ people: [SignInBatchRequest.Person], createUser: Bool?, chainsFrom: Int)
        async throws -> [Result<User?, ShareError>]
    {
        let chunks = people.chunked(CloudKitLimits.operationsPerRequest)
        let answers = try await withThrowingTaskGroup(of: (Int, SignInBatchResponse).self) { group in
            for (index, chunk) in chunks.enumerated() {
                group.addTask {
                    let response: SignInBatchResponse = try await self.send(
                        path: WireSpelling.signInBatchPath,
                        body: SignInBatchRequest(users: chunk, createUser: createUser, for: self.endpoint),
                        auth: .apiTokenOnly)
                    return (index, response)
                }
            }
            var answers = [SignInBatchResponse?](repeating: nil, count: chunks.count)
            for try await (index, response) in group { answers[index] = response }
            return answers
        }
        var results: [Result<User?, ShareError>] = []
        results.reserveCapacity(people.count)
        for (chunk, answer) in zip(chunks, answers) {
            guard let answer, answer.users.count == chunk.count else {
                throw ShareError(
                    .internalError,
                    "a batch sign-in answered \(answer?.users.count ?? 0) entries for \(chunk.count) users; "
                        + "the response is malformed")
            }
            for (person, entry) in zip(chunk, answer.users) {
                do {
                    let (user, token) = try entry.signedIn(email: person.emailAddress)
                    if results.count >= chainsFrom {
                        await sessions.signedInAgain(user, token: token)
                    } else {
                        await sessions.signedIn(user, token: token)
                    }
                    results.append(.success(user))
                } catch let error as ShareError where createUser == false && error.code == .notFound {
                    results.append(.success(nil))
                } catch let error as ShareError {
                    results.append(.failure(error))
                }
            }
        }
        return results
    }
}
