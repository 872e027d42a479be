/// CloudKit's sharing rules as pure functions: who may see, read, write and share what.
///
/// Every store (the embedded SQLite store, and through it the emulator) asks these functions and nothing
/// else, so the rules live in one place. Each takes plain values — the caller, the owner of the zone, the
/// share that covers the record or zone (nil when none does) — and answers nil when the operation is
/// allowed, or the `ShareError` CloudKit answers with.
///
/// The rules, as CloudKit applies them:
/// - The zone's owner may do anything in it, including sharing and deleting a hierarchy's root.
/// - A participant has access only once it accepted (`pending` and `removed` have none). Its access is
///   its permission (`read-only`, `read-write`); an administrator has `read-write` and may also manage the
///   share. A public user (who joined through the URL of a share with a public permission) has the share's
///   public permission.
/// - Read-write access creates, changes and deletes records in the shared zone or hierarchy; a new record
///   in a hierarchy share must have its `parent` inside it. Only the owner deletes the root.
/// - Only the owner or an administrator changes the participants, the permissions and the public
///   permission; an administrator cannot change another administrator nor make one.
/// - A participant may leave (its status becomes `removed`); the owner stops sharing by deleting the share.
/// - Permission comes before the change tag: a write (update, replace, delete, of a record or a share) is
///   judged by these rules first, so a caller who may not make it is refused `ACCESS_DENIED` whatever change
///   tag it sent; the tag is compared only for a caller who may write, and no refusal tells one who may not
///   what the current tag is.
public enum AccessRules {
    /// What a caller may do with the records a share covers.
    public enum Access: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        case none = 0
        case readOnly = 1
        case readWrite = 2
        case administrator = 3
        case owner = 4

        public static func < (lhs: Access, rhs: Access) -> Bool { lhs.rawValue < rhs.rawValue }

        public var canRead: Bool { self >= .readOnly }
        public var canWrite: Bool { self >= .readWrite }
        public var canManageShare: Bool { self >= .administrator }

        public var description: String {
            switch self {
            case .none: "no access"
            case .readOnly: "read-only access"
            case .readWrite: "read-write access"
            case .administrator: "administrator"
            case .owner: "owner"
            }
        }
    }

    /// The access `caller` has to what `share` covers in a zone of `zoneOwner`.
    public static func access(caller: UserRecordName, zoneOwner: UserRecordName, share: Share?) -> Access {
        if caller == zoneOwner { return .owner }
        guard let share, let entry = share.participant(caller), entry.acceptance == .accepted else { return .none }
        return access(of: entry, in: share)
    }

    /// The access a participant of `share` has once accepted (what a pending invitation promises; nothing
    /// for one who left, until invited again).
    public static func access(of entry: Participant, in share: Share) -> Access {
        switch entry.role {
        case .owner: return .owner
        // An administrator is a read-write participant who also manages the share; the stores refuse a
        // read-only one, and one that slipped in (an old store) gets no more than its permission.
        case .administrator: return entry.permission == .readWrite ? .administrator : access(for: entry.permission)
        case .privateUser: return access(for: entry.permission)
        case .publicUser: return access(for: share.permission(of: entry))
        }
    }

    private static func access(for permission: Permission) -> Access {
        switch permission {
        case .none: .none
        case .readOnly: .readOnly
        case .readWrite: .readWrite
        }
    }

    /// Whether the share appears in `caller`'s shared database: only after the caller accepted it, and never
    /// for the owner (whose zones are in the private database).
    public static func isVisibleInSharedDatabase(caller: UserRecordName, zoneOwner: UserRecordName, share: Share)
        -> Bool
    {
        caller != zoneOwner && access(caller: caller, zoneOwner: zoneOwner, share: share).canRead
    }

    /// Whether `caller` reaches a zone of `zoneOwner` through its shared database: the zone is there, for it
    /// accepted one of its `shares` (`isVisibleInSharedDatabase`). Anyone else is answered, for every
    /// operation, as for a zone that does not exist (`unknownZone`): a stranger, and also a participant who
    /// has not accepted or who left, whose reads already answered so. A refusal never tells what exists.
    public static func mayReach(caller: UserRecordName, zoneOwner: UserRecordName, shares: some Sequence<Share>)
        -> Bool
    {
        shares.contains { isVisibleInSharedDatabase(caller: caller, zoneOwner: zoneOwner, share: $0) }
    }

    /// Whether `caller` may be told that a zone of `zoneOwner` exists when it leaves one of its `shares`: it is
    /// listed on one, whatever its acceptance (the owner told it of the share by inviting it), so that an
    /// invitation can be declined. Anyone else is answered as for a zone that does not exist.
    public static func mayKnowOf(caller: UserRecordName, zoneOwner: UserRecordName, shares: some Sequence<Share>)
        -> Bool
    {
        caller == zoneOwner || shares.contains { $0.participant(caller) != nil }
    }

    /// The refusal of a zone `caller` names in its shared database and may not reach there (`mayReach`): the
    /// one a zone that does not exist gets, with the same words, whether the zone is missing, is someone's zone
    /// the caller was never told of, or is one whose share it has not accepted (`ZONE_NOT_FOUND`).
    ///
    /// - Parameters:
    ///   - zoneName: the zone the caller named.
    ///   - owner: the owner the caller named.
    ///   - caller: who asked.
    ///   - insight: why, for the store's keeper only (`ShareError.insight`).
    public static func unknownZone(
        _ zoneName: String, owner: UserRecordName, caller: UserRecordName, insight: String? = nil
    ) -> ShareError {
        ShareError(
            .zoneNotFound, "no zone \(zoneName) of \(owner) is shared with \(caller)", subject: zoneName,
            insight: insight)
    }

    /// Why `caller` does not reach `owner`'s zone in its shared database, as the store's keeper may be told
    /// (`ShareError.insight`): the zone is missing, or the caller is on none of its shares, or was invited to
    /// one and has not accepted it, or was removed.
    public static func unreachedZoneInsight(
        _ zoneName: String, owner: UserRecordName, caller: UserRecordName, shares: some Sequence<Share>
    ) -> String {
        let invitations = shares.compactMap { $0.participant(caller) }
        if invitations.contains(where: { $0.acceptance == .pending }) {
            return "\(caller) was invited to a share of \(owner)'s zone \(zoneName) and has not accepted it"
        }
        if !invitations.isEmpty {
            return "\(caller) no longer takes part in a share of \(owner)'s zone \(zoneName)"
        }
        return "\(caller) is not a participant of any share of \(owner)'s zone \(zoneName)"
    }

    /// The refusal of a record the caller may not read, in a zone it reaches: the one a record that does not
    /// exist gets, with the same words (`NOT_FOUND`), for the same reason.
    ///
    /// - Parameters:
    ///   - name: the record the caller named.
    ///   - subject: the record as refusals name it (`Zone/record`).
    ///   - insight: why, for the store's keeper only (`ShareError.insight`).
    public static func unknownRecord(_ name: String, subject: String, insight: String? = nil) -> ShareError {
        ShareError(.notFound, "no record named \(name) in this zone", subject: subject, insight: insight)
    }

    /// Reading a record (or the share itself) that `share` covers.
    public static func read(caller: UserRecordName, zoneOwner: UserRecordName, share: Share?, subject: String)
        -> ShareError?
    {
        if access(caller: caller, zoneOwner: zoneOwner, share: share).canRead { return nil }
        return denied(caller: caller, zoneOwner: zoneOwner, share: share, action: "read", subject: subject)
    }

    /// Creating a record. `share` is the share the new record would join: the zone's share, or the share of
    /// the hierarchy its `parent` belongs to; nil when it would join none (outside any hierarchy).
    public static func create(caller: UserRecordName, zoneOwner: UserRecordName, share: Share?, subject: String)
        -> ShareError?
    {
        let level = access(caller: caller, zoneOwner: zoneOwner, share: share)
        if level.canWrite { return nil }
        if share == nil, caller != zoneOwner {
            return ShareError(
                .accessDenied,
                "a record created in someone else's zone must have its parent inside a hierarchy shared with you",
                subject: subject)
        }
        return denied(caller: caller, zoneOwner: zoneOwner, share: share, action: "create", subject: subject)
    }

    /// Changing a record that `share` covers.
    public static func update(caller: UserRecordName, zoneOwner: UserRecordName, share: Share?, subject: String)
        -> ShareError?
    {
        if access(caller: caller, zoneOwner: zoneOwner, share: share).canWrite { return nil }
        return denied(caller: caller, zoneOwner: zoneOwner, share: share, action: "change", subject: subject)
    }

    /// Deleting a record that `share` covers; `isRoot` when it is the root of a hierarchy share.
    public static func delete(
        caller: UserRecordName, zoneOwner: UserRecordName, share: Share?, isRoot: Bool, subject: String
    ) -> ShareError? {
        let level = access(caller: caller, zoneOwner: zoneOwner, share: share)
        if isRoot, level != .owner {
            if !level.canRead {
                return denied(caller: caller, zoneOwner: zoneOwner, share: share, action: "delete", subject: subject)
            }
            return ShareError(
                .accessDenied, "only the owner deletes the root of a shared hierarchy", subject: subject)
        }
        if level.canWrite { return nil }
        return denied(caller: caller, zoneOwner: zoneOwner, share: share, action: "delete", subject: subject)
    }

    /// Creating a share: only the zone's owner shares.
    public static func createShare(caller: UserRecordName, zoneOwner: UserRecordName, subject: String) -> ShareError? {
        if caller == zoneOwner { return nil }
        return ShareError(.accessDenied, "only the owner of a zone shares it or its records", subject: subject)
    }

    /// Saving changes to an existing share: its title, public permission and participants.
    ///
    /// The owner may change anything. An administrator may change the title, the public permission and the
    /// private users (add, remove, change their permission), but not other administrators, and may not make
    /// anyone an administrator. Anyone else is refused, even when the proposal changes nothing.
    public static func updateShare(
        caller: UserRecordName, zoneOwner: UserRecordName, existing: Share, proposed: Share, subject: String
    ) -> ShareError? {
        let level = access(caller: caller, zoneOwner: zoneOwner, share: existing)
        if level == .owner { return nil }
        guard level == .administrator else {
            if !level.canRead {
                return denied(caller: caller, zoneOwner: zoneOwner, share: existing, action: "change", subject: subject)
            }
            return ShareError(
                .accessDenied,
                "only the owner or an administrator changes a share's participants and permissions (you have \(level))",
                subject: subject)
        }
        let before = Dictionary(existing.participants.map { ($0.userRecordName, $0) }, uniquingKeysWith: { a, _ in a })
        let after = Dictionary(proposed.participants.map { ($0.userRecordName, $0) }, uniquingKeysWith: { a, _ in a })
        for (user, old) in before where old.role == .administrator && user != caller {
            let new = after[user]
            if new == nil || new?.role != .administrator || new?.permission != old.permission {
                return ShareError(
                    .accessDenied, "an administrator cannot remove or change another administrator", subject: subject)
            }
        }
        for (user, new) in after where new.role == .administrator && before[user]?.role != .administrator {
            return ShareError(.accessDenied, "only the owner makes a participant an administrator", subject: subject)
        }
        return nil
    }

    /// Deleting a share (stopping sharing): the owner only. A participant leaves instead.
    public static func deleteShare(caller: UserRecordName, zoneOwner: UserRecordName, share: Share, subject: String)
        -> ShareError?
    {
        if caller == zoneOwner { return nil }
        if access(caller: caller, zoneOwner: zoneOwner, share: share).canRead {
            return ShareError(
                .accessDenied, "only the owner deletes a share; a participant leaves it instead", subject: subject)
        }
        return denied(caller: caller, zoneOwner: zoneOwner, share: share, action: "delete", subject: subject)
    }

    /// Leaving a share: any participant that has not left; not the owner.
    public static func leave(caller: UserRecordName, zoneOwner: UserRecordName, share: Share, subject: String)
        -> ShareError?
    {
        if caller == zoneOwner {
            return ShareError(
                .badRequest, "the owner cannot leave a share; delete the share to stop sharing", subject: subject)
        }
        guard let entry = share.participant(caller), entry.acceptance != .removed else {
            return ShareError(.notFound, "\(caller) is not a participant of this share", subject: subject)
        }
        return nil
    }

    /// Accepting a share: invited participants, and anyone when the share has a public permission.
    public static func accept(caller: UserRecordName, zoneOwner: UserRecordName, share: Share, subject: String)
        -> ShareError?
    {
        if caller == zoneOwner { return nil }
        if share.publicPermission != .none { return nil }
        guard let entry = share.participant(caller) else {
            return ShareError(
                .accessDenied, "\(caller) is not invited to this share; ask its owner to add them", subject: subject)
        }
        if entry.acceptance == .removed {
            return ShareError(
                .accessDenied, "\(caller) left or was removed from this share; the owner must invite them again",
                subject: subject)
        }
        return nil
    }

    /// Whether `caller` may change or delete a record of the public database: everyone reads it, only the
    /// user who created a record writes it. `verb` names the operation in the refusal ("changes", "deletes").
    ///
    /// The refusal starts with the live service's words, "Operation not permitted", and does not name the
    /// creator, whom a reader of the public record need not learn; the store's keeper is told who it is
    /// (`ShareError.insight`).
    public static func writePublicRecord(caller: UserRecordName, creator: UserRecordName, verb: String, subject: String)
        -> ShareError?
    {
        guard caller != creator else { return nil }
        return ShareError(
            .accessDenied, "Operation not permitted: only the creator of a public record \(verb) it",
            subject: subject, insight: "only the creator of a public record (\(creator)) \(verb) it")
    }

    // MARK: Callers without a signed-in user

    /// The caller of a request that carries the API token but no web auth token: someone reading the public
    /// database without signing in, as CloudKit JS does before `setUpAuth` finds a user. No user has this
    /// record name (real ones start with `_` and a hex digit).
    public static let unauthenticatedCaller: UserRecordName = "_unauthenticated"

    /// Whether `caller` may find `user` by email address, phone number or record name (`users/discover`,
    /// `users/lookup/…`): a user who chose to be discoverable, and oneself. Inviting someone to a share needs
    /// no discovery.
    public static func mayDiscover(caller: UserRecordName, user: UserRecordName, discoverable: Bool) -> Bool {
        discoverable || caller == user
    }

    /// The caller of a request signed with a server-to-server key: the key acts in the public database as a
    /// user of its own, who creates (and so may change) the public records it saves.
    public static func serverKeyCaller(keyID: String) -> UserRecordName {
        serverKeyPrefix + keyID
    }

    /// Whether `caller` is a server-to-server key's caller (`serverKeyCaller(keyID:)`), a user no store holds.
    public static func isServerKeyCaller(_ caller: UserRecordName) -> Bool {
        caller.hasPrefix(serverKeyPrefix)
    }

    private static let serverKeyPrefix = "_serverKey_"

    /// What a caller asks of a database, for `unauthenticated(caller:intent:database:)`.
    public enum Intent: Sendable, Hashable {
        /// Reading records, zones and changes.
        case read
        /// Creating, changing or deleting records or zones.
        case write
        /// Asking about the signed-in user (`users/*`, accepting shares).
        case aboutTheUser
    }

    /// Whether `caller` may do `intent` in `database` without signing in: nil when allowed, otherwise
    /// `AUTHENTICATION_REQUIRED` (CloudKit then hands out a `redirectURL` to sign in).
    ///
    /// A signed-in user may do anything these rules allow elsewhere. An unauthenticated caller may only read
    /// the public database, as CloudKit lets a web page read it with the API token alone; writing to it, any
    /// request to the private or shared database, and asking who the user is need a signed-in user.
    public static func unauthenticated(caller: UserRecordName, intent: Intent, database: DatabaseScope)
        -> ShareError?
    {
        guard caller == unauthenticatedCaller else { return nil }
        switch (intent, database) {
        case (.read, .public):
            return nil
        case (.write, .public):
            return ShareError(
                .authenticationRequired,
                "writing to the public database needs a signed-in user: sign in and send the ckWebAuthToken")
        case (.aboutTheUser, _):
            return ShareError(
                .authenticationRequired, "this request is about the signed-in user: sign in and send the ckWebAuthToken"
            )
        case (_, .private), (_, .shared):
            return ShareError(
                .authenticationRequired,
                "the \(database.rawValue) database needs a signed-in user: sign in and send the ckWebAuthToken")
        }
    }

    /// Checks a share's participants: at most 100, and private and public participants not mixed.
    public static func validateParticipants(of share: Share, subject: String) -> ShareError? {
        if let problem = participantCountProblem(share.participants.count) {
            return ShareError(.badRequest, problem, subject: subject)
        }
        let hasPrivate = share.participants.contains { $0.role == .privateUser || $0.role == .administrator }
        if let problem = mixingProblem(publicPermission: share.publicPermission, hasPrivateParticipants: hasPrivate) {
            return ShareError(.badRequest, problem, subject: subject)
        }
        if let admin = share.participants.first(where: { $0.role == .administrator && $0.permission != .readWrite }) {
            return ShareError(
                .badRequest,
                "an administrator has read-write permission; \(admin.email ?? admin.userRecordName) is an administrator with \(admin.permission.recipeName)",
                subject: subject)
        }
        if share.participants.contains(where: { $0.role == .owner }) {
            return ShareError(.badRequest, "the owner is not listed among a share's participants", subject: subject)
        }
        return nil
    }

    /// Why a share cannot have `count` participants (CloudKit's limit), in words for a message; nil when it can.
    public static func participantCountProblem(_ count: Int) -> String? {
        guard count > CloudKitLimits.participantsPerShare else { return nil }
        return "a share holds at most \(CloudKitLimits.participantsPerShare) participants; this one would have \(count)"
    }

    /// Why a share cannot have both a public permission and invited participants (CloudKit does not mix them),
    /// in words for a message; nil when it has one or the other.
    public static func mixingProblem(publicPermission: Permission, hasPrivateParticipants: Bool) -> String? {
        guard hasPrivateParticipants, publicPermission != .none else { return nil }
        return "a share with a public permission (\(publicPermission.recipeName)) cannot also have private "
            + "participants; set the public permission to none or remove them"
    }

    private static func denied(
        caller: UserRecordName, zoneOwner: UserRecordName, share: Share?, action: String, subject: String
    ) -> ShareError {
        let why: String
        if let share, let entry = share.participant(caller) {
            switch entry.acceptance {
            case .pending: why = "\(caller) has not accepted the share yet"
            case .removed: why = "\(caller) left or was removed from the share"
            case .accepted:
                why = "\(caller) has \(access(caller: caller, zoneOwner: zoneOwner, share: share)) to this share"
            }
        } else if share == nil {
            why = "it is not shared with \(caller)"
        } else {
            why = "\(caller) is not a participant of this share"
        }
        return ShareError(.accessDenied, "not allowed to \(action): \(why)", subject: subject)
    }
}
