import ShareKit

/// The people who signed in to this emulator, and the worlds they have a user record in.
///
/// On CloudKit one Apple ID has a user record in each container it uses, made when it first reaches it. The
/// emulator's web auth tokens name a user record name (the same in every world: `StableName`), so the first
/// request a token makes in a world signs its holder in there (`EmulatorService.store(for:as:)`). Held in
/// memory, as the tokens are: a restart asks everyone to sign in again.
actor EmulatorIdentities {
    private var people: [UserRecordName: User] = [:]
    private var present: Set<Presence> = []

    private struct Presence: Hashable {
        var user: UserRecordName
        var world: StoreWorld
    }

    /// Remembers who a user is, from a sign-in.
    func remember(_ user: User) {
        if let known = people[user.recordName], user.name == nil {
            people[user.recordName] = User(recordName: user.recordName, email: user.email, name: known.name)
        } else {
            people[user.recordName] = user
        }
    }

    /// The user signed in as `recordName`, or nil for one who never signed in here.
    func identity(of recordName: UserRecordName) -> User? { people[recordName] }

    /// Notes that `user` has a user record in `world`.
    func signedIn(_ user: User, in world: StoreWorld) {
        present.insert(Presence(user: user.recordName, world: world))
    }

    /// Forgets who has a user record in `world`: it was reset or restored, and its users may be gone.
    func forget(_ world: StoreWorld) {
        present = present.filter { $0.world != world }
    }

    /// Who to sign in to `world` before `user`'s request there: nil when the user has a record there already,
    /// or is not a person who signed in (the API token's caller, a server-to-server key).
    func needingSignIn(_ user: UserRecordName, in world: StoreWorld) -> User? {
        guard let person = people[user], person.email != nil else { return nil }
        return present.contains(Presence(user: user, world: world)) ? nil : person
    }
}
