import Foundation
import Logging
import PlanModel
import ShareKit

// MARK: - Signing in the users the store does not have yet

extension ApplyRun {
    /// The users the store does not have yet, in two groups: those to sign in before anything is written, and
    /// those that may sign in while the zones are written (nil-free names are filled in as they come).
    ///
    /// Planning creates no users, so apply does, before anything needs their record names. The owner always
    /// comes first (every write goes as them). Over `http:` the others sign in while the zones are written: a
    /// share names a participant the store does not know yet by email address, and the store makes that user
    /// (the sign-in then finds them), so the sign-ins' round trip overlaps the writes' rather than precedes them
    /// (up to 200 users a request, `signsInTogether`). Those that fit in the new owner's own request go with
    /// the owner: that round trip is made anyway, and the next request can already name them. Not when a new
    /// user's phone number or discoverability is set (a share may name them by phone, which must be theirs
    /// first), nor on a store that signs everyone in in one transaction.
    func newUsersToSignIn() -> (first: [PlannedUser], later: [PlannedUser]) {
        // Only a store that acts as any user creates users; on cloudkit: the others are waited for (the plan
        // lists them), and the owner is the signed-in user.
        guard store.capabilities.actsAsAnyUser else { return ([], []) }
        let newUsers =
            plan.users.filter(\.isNew)
            + (plan.owner.isNew && !plan.users.contains { $0.handle == plan.owner.handle } ? [plan.owner] : [])
        let overlap =
            !store.capabilities.batchesInOneTransaction
            && !newUsers.contains { $0.handle != plan.owner.handle && ($0.phone != nil || $0.discoverable != nil) }
        guard overlap else { return (newUsers, []) }
        let owner = newUsers.filter { $0.handle == plan.owner.handle }
        var others = newUsers.filter { $0.handle != plan.owner.handle }
        guard !owner.isEmpty, store.capabilities.signsInTogether else { return (owner, others) }
        let along = others.prefix(CloudKitLimits.operationsPerRequest - owner.count)
        others.removeFirst(along.count)
        return (owner + along, others)
    }

    /// Signs in `users`, creating them, and writes their record names into the plan; the owner readied for
    /// `ownerCalls` calls at once (`UserSignIn.calls`). Nil when every one is signed in, otherwise why not.
    mutating func signInNewUsers(_ users: [PlannedUser], ownerCalls: Int = 1) async -> String? {
        guard !users.isEmpty else { return nil }
        let calls = [plan.owner.handle: ownerCalls]
        return adopt(await Self.signIn(users, store: store, usersInFlight: usersInFlight, calls: calls), of: users)
    }

    /// Signs `users` in on a task of its own, while the run goes on.
    func startSigningIn(_ users: [PlannedUser]) -> Task<SignedIn, Never> {
        let (store, limit) = (self.store, usersInFlight)
        return Task { await Self.signIn(users, store: store, usersInFlight: limit) }
    }

    /// Record names by handle, and the first failure.
    typealias SignedIn = (recordNames: [String: UserRecordName], failure: String?)

    /// Signs in `users`: all in one call where the store signs many in at once (`signsInTogether`);
    /// otherwise one user a call, `usersInFlight` at a time. `calls`: by handle, the calls a user will make at
    /// once, where more than one.
    static func signIn(_ users: [PlannedUser], store: any Store, usersInFlight: Int, calls: [String: Int] = [:]) async
        -> SignedIn
    {
        var recordNames: [String: UserRecordName] = [:]
        var failure: String?
        let groups = store.capabilities.signsInTogether ? [users] : users.map { [$0] }
        await BoundedTasks.run(groups, limit: usersInFlight) { group in
            await BoundedTasks.result {
                try await store.signIn(
                    group.map { UserSignIn(email: $0.email ?? "", name: $0.name, calls: calls[$0.handle] ?? 1) })
            }
        } receive: { group, outcome in
            for (position, user) in group.enumerated() {
                let result: Result<User, any Error> =
                    switch outcome {
                    case .success(let results) where position < results.count: results[position].mapError { $0 }
                    case .success: .failure(ShareError(.internalError, "the store answered no result"))
                    case .failure(let error): .failure(error)
                    }
                switch result {
                case .success(let signedIn): recordNames[user.handle] = signedIn.recordName
                case .failure(let error):
                    failure = failure ?? "signing in \(user.handle) (\(user.email ?? "")) failed: \(error)"
                }
            }
        }
        return (recordNames, failure)
    }

    /// Writes the record names of `users` that signed in into the plan (and `newUserRecordNames`, for the
    /// participants that name them); the failure, if any.
    mutating func adopt(_ signedIn: SignedIn, of users: [PlannedUser]) -> String? {
        let recordNames = signedIn.recordNames
        if plan.owner.isNew, let name = recordNames[plan.owner.handle] { plan.owner.recordName = name }
        for index in plan.users.indices where plan.users[index].isNew {
            if let name = recordNames[plan.users[index].handle] { plan.users[index].recordName = name }
        }
        for user in users {
            if let email = user.email, let recordName = recordNames[user.handle] {
                newUserRecordNames[EmailAddress.normalized(email)] = recordName
            }
        }
        return signedIn.failure
    }

    /// The users the store already has that the run acts as besides the owner: the participants who accept a
    /// share, and the users whose subscriptions it writes or re-creates.
    func existingUsersActedAs() -> [KnownUserSignIn.Known] {
        guard store.capabilities.actsAsAnyUser else { return [] }
        var handles = Set(acceptances().map(\.participant.handle))
        for index in indices(.subscription, .delete, not: true) + indices(.subscription, .delete) {
            if let subscription = plan.changes[index].subscription { handles.insert(subscription.handle) }
        }
        for planned in plan.rearm ?? [] { handles.insert(planned.handle) }
        handles.remove(plan.owner.handle)
        guard !handles.isEmpty else { return [] }
        return plan.users.compactMap { user in
            guard handles.contains(user.handle), !user.isNew, let email = user.email else { return nil }
            return KnownUserSignIn.Known(handle: user.handle, email: email, recordName: user.recordName)
        }
    }

    /// Readies the users the run acts as (`existingUsersActedAs`) on a task of its own; nil when there are none.
    func startReadyingUsersActedAs() -> Task<String?, Never>? {
        let users = existingUsersActedAs()
        guard !users.isEmpty else { return nil }
        let store = self.store
        return Task { await KnownUserSignIn.ready(users, store: store) }
    }
}
