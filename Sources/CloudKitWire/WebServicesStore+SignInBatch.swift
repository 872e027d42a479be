import ShareKit

// MARK: - Many users signed in at once

extension WebServicesStore {
    /// On the emulator, 200 users a request (`POST /auth/signin/batch`), the requests under way together;
    /// each user signed in starts a token chain as a sign-in of their own does. On Apple's service, which
    /// signs in only its one user, one after another.
    public func signIn(_ users: [UserSignIn]) async throws -> [Result<User, ShareError>] {
        guard endpoint.kind == .emulator else { return try await signInOneByOne(users) }
        let people = users.map { SignInBatchRequest.Person(emailAddress: $0.email, name: $0.name) }
        return try await signInBatches(people, createUser: nil).map { result in
            result.flatMap { found in
                found.map(Result.success)
                    ?? .failure(ShareError(.internalError, "a sign-in that creates users found none"))
            }
        }
    }

    /// On the emulator, 200 addresses a request with `createUser: false`: an address nobody has is nil. On
    /// Apple's service, one after another.
    public func signInExisting(_ emails: [String]) async throws -> [Result<User?, ShareError>] {
        guard endpoint.kind == .emulator else { return try await signInExistingOneByOne(emails) }
        let people = emails.map { SignInBatchRequest.Person(emailAddress: $0, name: nil) }
        return try await signInBatches(people, createUser: false)
    }

    /// One result a person, in order: the user signed in (their token kept), nil for an address the emulator
    /// does not have when `createUser` is false, or that person's error.
    private func signInBatches(_ people: [SignInBatchRequest.Person], createUser: Bool?) async throws
        -> [Result<User?, ShareError>]
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
                    await sessions.signedIn(user, token: token)
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
