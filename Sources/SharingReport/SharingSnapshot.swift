import ShareKit

/// Who a store knows and which shares it holds: what the access matrix and the sharing graph are drawn from.
///
/// Data, not printing: readers fill it (from a store, or a plan's before and after), renderers draw it. The
/// rights themselves are never stored here; `AccessMatrix` asks `AccessRules` for each cell.
public struct SharingSnapshot: Sendable, Hashable, Codable {
    /// The users, in the order their rows are drawn: the ones named first, then participants not among them.
    public var users: [SharingUser]
    /// The shares, in a stable order (owner, zone, then zone-wide before hierarchies, by root).
    public var shares: [Share]

    public init(users: [SharingUser], shares: [Share]) {
        self.shares = shares.sorted { a, b in
            (a.zoneID.ownerRecordName, a.zoneID.zoneName, a.rootRecordName ?? "")
                < (b.zoneID.ownerRecordName, b.zoneID.zoneName, b.rootRecordName ?? "")
        }
        // Made at the first participant: a plan's before and after of 100,000 users and no share need none.
        var seen: Set<UserRecordName>?
        var all = users
        // A participant the caller did not name (someone who joined a public share, a user outside the recipe)
        // still gets a row: the report hides nobody who has access.
        for share in self.shares {
            for participant in share.participants where participant.role != .owner {
                if seen == nil { seen = Set(users.map(\.recordName)) }
                if seen?.insert(participant.userRecordName).inserted == true {
                    all.append(
                        SharingUser(
                            recordName: participant.userRecordName, email: participant.email, name: participant.name))
                }
            }
        }
        self.users = all
    }

    /// The user with this record name, if the snapshot has one.
    public func user(_ recordName: UserRecordName) -> SharingUser? { users.first { $0.recordName == recordName } }

    /// How a share is named for people: `FamilyLists` for a zone's share, `Trips/italy` for a hierarchy's,
    /// with the owner added when the snapshot holds the shares of more than one owner (`FamilyLists (alice)`).
    public func label(of share: Share) -> String {
        let path = share.rootRecordName.map { "\(share.zoneID.zoneName)/\($0)" } ?? share.zoneID.zoneName
        guard hasSeveralOwners else { return path }
        return "\(path) (\(user(share.zoneID.ownerRecordName)?.label ?? share.zoneID.ownerRecordName))"
    }

    /// Whether the shares belong to more than one owner.
    public var hasSeveralOwners: Bool { Set(shares.map(\.zoneID.ownerRecordName)).count > 1 }

    /// The snapshot narrowed to the shares of one zone (by name), or unchanged for nil.
    public func narrowed(toZone zone: String?) -> SharingSnapshot {
        guard let zone else { return self }
        var copy = self
        copy.shares = shares.filter { $0.zoneID.zoneName == zone }
        return copy
    }
}

/// A user as the reports name them.
public struct SharingUser: Sendable, Hashable, Codable {
    public var recordName: UserRecordName
    public var email: String?
    public var name: String?
    /// The recipe's handle (`bob`), when a recipe names the user.
    public var handle: String?

    public init(recordName: UserRecordName, email: String? = nil, name: String? = nil, handle: String? = nil) {
        self.recordName = recordName
        self.email = email
        self.name = name
        self.handle = handle
    }

    /// The shortest name people know the user by: the handle, else the email address, else the record name.
    public var label: String { handle ?? email ?? recordName }

    /// Whether `text` names this user: its handle, email address (in any spelling `EmailAddress` makes one)
    /// or record name.
    public func isNamed(_ text: String) -> Bool {
        text == handle || text == recordName
            || email.map { EmailAddress.normalized($0) == EmailAddress.normalized(text) } ?? false
    }
}
