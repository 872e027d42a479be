/// How a `records/modify` operation treats an existing record, as CloudKit defines `operationType`.
public enum OperationKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Fails with `EXISTS` if the record exists.
    case create
    /// Changes the named fields only; needs the current change tag.
    case update
    /// Changes the named fields, ignoring the change tag; creates the record if missing.
    case forceUpdate
    /// Replaces all fields (unnamed fields become null); needs the current change tag.
    case replace
    /// Replaces all fields, ignoring the change tag.
    case forceReplace
    /// Deletes; needs the current change tag.
    case delete
    /// Deletes, ignoring the change tag.
    case forceDelete

    public var isDelete: Bool { self == .delete || self == .forceDelete }
    public var checksChangeTag: Bool { self == .update || self == .replace || self == .delete }
}

/// One operation of a `modify` call: a record or a share, and what to do with it.
public struct RecordOperation: Sendable, Hashable, Codable {
    public enum Item: Sendable, Hashable, Codable {
        case record(Record)
        case share(Share)
    }

    public var kind: OperationKind
    public var item: Item

    public init(_ kind: OperationKind, _ record: Record) {
        self.kind = kind
        self.item = .record(record)
    }

    public init(_ kind: OperationKind, share: Share) {
        self.kind = kind
        self.item = .share(share)
    }

    /// The record name the operation is about.
    public var recordName: String {
        switch item {
        case .record(let r): r.recordName
        case .share(let s): s.recordName
        }
    }
}

/// The outcome of one operation of a `modify` call, in the order of the operations.
public enum RecordOutcome: Sendable, Hashable, Codable {
    case saved(Record)
    case savedShare(Share)
    case deleted(recordName: String)
    case failed(recordName: String, ShareError)

    public var error: ShareError? {
        if case .failed(_, let e) = self { return e }
        return nil
    }
}

/// A zone operation of `zones/modify`.
public struct ZoneOperation: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable { case create, delete }
    public var kind: Kind
    public var zoneID: ZoneID

    public init(_ kind: Kind, _ zoneID: ZoneID) {
        self.kind = kind
        self.zoneID = zoneID
    }
}

/// One zone's operations (`Store.modifyRecords(_:as:)`), and where the local files their asset fields name
/// are.
public struct ZoneWrite: Sendable {
    public var operations: [RecordOperation]
    public var zoneID: ZoneID
    public var database: DatabaseScope
    public var atomic: Bool
    /// The local files the saves' `ASSETID` values name (`PATH#fnv1a64:HEX`), whose bytes the store keeps or
    /// uploads before it saves the records; a save naming one it does not find is refused.
    public var assetFiles: AssetFiles

    public init(
        _ operations: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, atomic: Bool = false,
        assetFiles: AssetFiles = .none
    ) {
        self.operations = operations
        self.zoneID = zoneID
        self.database = database
        self.atomic = atomic
        self.assetFiles = assetFiles
    }
}

/// Every record of a zone with its change tag, its shares, and the zone's change token as of that reading:
/// what a zone holds, without its records' fields (`Store.zoneTags(_:in:as:)`).
public struct ZoneTags: Sendable, Hashable {
    /// Change tags of the zone's records, by record name.
    public var records: [String: String]
    /// The zone's shares, in record name order.
    public var shares: [Share]
    /// The zone's change token as of the reading: its changes since are what changed after it.
    public var token: ChangeToken

    public init(records: [String: String], shares: [Share], token: ChangeToken) {
        self.records = records
        self.shares = shares
        self.token = token
    }
}

/// A user to sign in (`Store.signIn(_:)`).
public struct UserSignIn: Sendable, Hashable {
    public var email: String
    public var name: String?
    /// How many calls as this user the caller means to have under way at once. A store that needs something
    /// of each (over Web Services, a token chain: each answer hands out the token of the next request) readies
    /// that many with the sign-in, rather than one a round trip as the calls find the others busy.
    public var calls: Int

    public init(email: String, name: String? = nil, calls: Int = 1) {
        self.email = email
        self.name = name
        self.calls = calls
    }
}

/// Shares one user accepts (`Store.acceptShares(_:)`): their URLs or short GUIDs.
public struct ShareAcceptances: Sendable, Hashable {
    public var user: UserRecordName
    public var urls: [String]

    public init(user: UserRecordName, urls: [String]) {
        self.user = user
        self.urls = urls
    }
}

/// What a store can do beyond the protocol's common ground.
public struct StoreCapabilities: Sendable, Hashable, Codable {
    /// The store can act as any user (local stores, the emulator); Apple's service acts only as the
    /// signed-in user.
    public var actsAsAnyUser: Bool
    /// The store can be wiped (`reset`): local stores only.
    public var canReset: Bool
    /// The store reads, extends and deploys its schema (local stores, the emulator); Apple's schema is
    /// managed with `cktool` and the CloudKit Console, outside Web Services.
    public var keepsSchema: Bool
    /// The store does the calls that span many users or zones (`signIn(_:)`, `acceptShares(_:)`,
    /// `modifyRecords(_:as:)`) cheaper than one call for each: the embedded store, in one transaction. Over Web
    /// Services each request names one zone and carries one user's token, so callers send one at a time,
    /// several in flight.
    public var batchesInOneTransaction: Bool
    /// The store signs in many users in one call (`signIn(_:)`, `signInExisting(_:)`) cheaper than one call
    /// each: the embedded store in one transaction, the emulator 200 users a request. Apple's service signs in
    /// only its one user.
    public var signsInTogether: Bool
    /// The store reads a zone's change tags without its records (`zoneTags(_:in:as:)`) at a small part of the
    /// cost of reading the records: the embedded store, from its indexes; Web Services, from the zones'
    /// feeds asked for no field (`desiredKeys`), many zones a request. An apply then leaves the plan cache as
    /// the store holds it after its writes (Docs/Plans.md, "Incremental plans").
    public var readsZoneTags: Bool

    public init(
        actsAsAnyUser: Bool, canReset: Bool, keepsSchema: Bool = true, batchesInOneTransaction: Bool = false,
        signsInTogether: Bool? = nil, readsZoneTags: Bool = false
    ) {
        self.actsAsAnyUser = actsAsAnyUser
        self.canReset = canReset
        self.keepsSchema = keepsSchema
        self.batchesInOneTransaction = batchesInOneTransaction
        self.signsInTogether = signsInTogether ?? batchesInOneTransaction
        self.readsZoneTags = readsZoneTags
    }
}

/// A CloudKit container: users, their databases, zones, records and shares, with CloudKit's access rules.
///
/// Every call is made as a given user (`as`), and is refused with `ACCESS_DENIED` where CloudKit would
/// refuse it. Calls that take several items answer one result per item, in order.
public protocol Store: Sendable {
    /// A human name for the store in messages: `sqlite:.sharelane/store.sqlite`, `http://127.0.0.1:8420`.
    var displayName: String { get }
    var capabilities: StoreCapabilities { get }

    // MARK: Users

    /// Signs in as the user with this email address, creating the user in local stores if unknown.
    /// - Throws: `ShareError` (`AUTHENTICATION_FAILED` where the store cannot act as that user).
    func signIn(email: String, name: String?) async throws -> User
    /// Signs in several users at once, creating those the store does not have: one result per entry, in
    /// order; one that fails does not stop the others.
    /// - Throws: only when the store cannot be reached at all.
    func signIn(_ users: [UserSignIn]) async throws -> [Result<User, ShareError>]
    /// Signs in as the user with this email address if the store has one, creating nothing: nil when it has
    /// none. Plans use it, because a plan changes nothing in a store, not even its list of users.
    /// - Throws: `ShareError` when the store cannot be reached or refuses.
    func signInExisting(email: String) async throws -> User?
    /// `signInExisting(email:)` of several addresses at once, creating nothing: one result per address, in
    /// order (nil where the store has no such user); one that fails does not stop the others.
    /// - Throws: only when the store cannot be reached at all.
    func signInExisting(_ emails: [String]) async throws -> [Result<User?, ShareError>]
    /// `signInExisting(_:)` of the users' addresses, each user found readied for their `calls` at once (as
    /// `signIn(_:)` readies them).
    func signInExisting(_ users: [UserSignIn]) async throws -> [Result<User?, ShareError>]
    /// Whether the store can act as the user with this email address: any user where it acts as any user;
    /// on a store that acts only as its signed-in user (`cloudkit:`), that user when the store knows their
    /// address, and each other user it holds a sign-in of (a recipe's other owners).
    func canActAs(email: String) async -> Bool
    /// The users among `users` the store cannot act as before they sign in again in this process: over Web
    /// Services to the emulator, those it holds no web auth token for (a plan made from the cache file signs
    /// in the owner alone). Empty for a store that acts as anyone (SQLite) or only as its signed-in user.
    func needingSignIn(_ users: [UserRecordName]) async -> Set<UserRecordName>
    /// The user the caller is (`users/current`).
    func currentUser(as user: UserRecordName) async throws -> User
    /// Users by email address (`users/lookup/email`); nil where no user has that address, or the user is
    /// not discoverable to the caller (`AccessRules.mayDiscover`), as CloudKit answers.
    func lookupUsers(emails: [String], as user: UserRecordName) async throws -> [User?]

    // MARK: Users: discovery and phone numbers

    /// Sets what others can find of the caller: a phone number, and whether they are discoverable.
    /// - Throws: `BAD_REQUEST` for a phone number not in international form, `CONFLICT` for one another user
    ///   has; where the store cannot set them (Apple's service: the user chooses in an app), `BAD_REQUEST`.
    func setDiscoverability(_ settings: UserDiscoverability, as user: UserRecordName) async throws
    /// The caller's own phone number and discoverability.
    func discoverability(as user: UserRecordName) async throws -> UserDiscoverability
    /// `users/discover`: one identity per lookup, in order. A user who is not discoverable (other than the
    /// caller) answers like one who does not exist: the lookup only.
    func discoverUsers(_ lookups: [UserLookup], as user: UserRecordName) async throws -> [UserIdentity]

    // MARK: Zones

    func listZones(in database: DatabaseScope, as user: UserRecordName) async throws -> [Zone]
    /// One result per zone ID: the zone, or `ZONE_NOT_FOUND`.
    func lookupZones(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    /// Creates or deletes zones (private database only). Deleting a zone deletes its records and share.
    func modifyZones(_ operations: [ZoneOperation], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [Result<Zone, ShareError>]

    // MARK: Records and shares

    /// Records and shares by record name, one outcome per name (`saved` / `savedShare` or `failed`).
    func lookupRecords(_ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName)
        async throws -> [RecordOutcome]
    func queryRecords(_ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName)
        async throws -> QueryPage
    /// Applies several zones' operations as `modifyRecords(_:as:)` applies each, in order:
    /// one result per write. When one cannot be made at all (its call throws) the later ones are not, and the
    /// results end there; a store that makes them in one transaction then answers that failure for every
    /// write, none of which was made.
    func modifyRecords(_ writes: [ZoneWrite], as user: UserRecordName) async -> [Result<[RecordOutcome], any Error>]
    /// Applies record and share operations in one zone, one outcome per operation, in order; the local files
    /// the saves' asset fields name are kept (or uploaded) first, from `write.assetFiles`.
    ///
    /// With `atomic`, either every operation succeeds or none is applied: the failing ones carry their own
    /// error and the others `ATOMIC_ERROR`. At most 200 operations a call.
    func modifyRecords(_ write: ZoneWrite, as user: UserRecordName) async throws -> [RecordOutcome]

    // MARK: Sharing

    /// What a share URL (or its short GUID) leads to (`records/resolve`).
    func resolveShare(url: String, as user: UserRecordName) async throws -> ShareMetadata
    /// Accepts the share at this URL (or short GUID) as `user` (`records/accept`); the share then appears in
    /// the user's shared database.
    func acceptShare(url: String, as user: UserRecordName) async throws -> ShareMetadata
    /// Accepts several shares as `user` at once (`records/accept` takes a list of short GUIDs): one result
    /// per URL, in order; a share that cannot be accepted gets its error and does not stop the others.
    /// At most 200 URLs a call.
    /// - Throws: only when the store cannot be reached at all.
    func acceptShares(urls: [String], as user: UserRecordName) async throws -> [Result<ShareMetadata, ShareError>]
    /// Accepts shares as several users at once: one list of results per request, in order, as
    /// `acceptShares(urls:as:)` answers for each.
    /// - Throws: only when the store cannot be reached at all.
    func acceptShares(_ requests: [ShareAcceptances]) async throws -> [[Result<ShareMetadata, ShareError>]]
    /// Leaves a share as a participant: status `removed`, gone from the user's shared database.
    /// `zoneID` names the zone as the participant sees it (the owner's record name as owner).
    func leaveShare(recordName: String, in zoneID: ZoneID, as user: UserRecordName) async throws

    // MARK: Changes

    func databaseChanges(in database: DatabaseScope, since token: ChangeToken?, as user: UserRecordName)
        async throws -> DatabaseChanges
    func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName
    ) async throws -> ZoneChanges
    /// For each zone, in order: every record the caller may read with its change tag, the shares the caller
    /// may read, and the zone's change token, read at one moment; nil for a zone that does not exist. The
    /// embedded store reads all the zones in one transaction.
    func zoneTags(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [ZoneTags?]
    /// `zoneTags(_:in:as:)` of zones read before: each zone from what that reading found (`known`, in order:
    /// its tags, shares and token then; nil to read the zone whole) and its change feed since, so that a zone of
    /// 100,000 records an apply changed one record of is read back as one change, not 100,000 records. A token
    /// the store no longer takes reads the zone whole. The embedded store reads its indexes whole, as cheap.
    func zoneTags(_ zoneIDs: [ZoneID], since known: [ZoneTags?], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [ZoneTags?]

    // MARK: Subscriptions and notifications

    /// The user's subscriptions in a database (`subscriptions/list`), by subscription ID.
    func listSubscriptions(in database: DatabaseScope, as user: UserRecordName) async throws -> [Subscription]
    /// One outcome per ID: `saved` with the subscription, or `failed` with `NOT_FOUND`.
    func lookupSubscriptions(_ subscriptionIDs: [String], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [SubscriptionOutcome]
    /// Creates, updates and deletes the user's subscriptions (`subscriptions/modify`, at most 200
    /// operations), one outcome per operation, in order: a failing operation does not stop the others.
    /// A second query subscription of the same record type and the same `firesOn` fails with
    /// `INTERNAL_ERROR`, as live CloudKit answers.
    func modifySubscriptions(
        _ operations: [SubscriptionOperation], in database: DatabaseScope, as user: UserRecordName
    ) async throws -> [SubscriptionOutcome]
    /// Opens a channel on which the user's notifications from now on are delivered (`tokens/create`).
    func openNotificationChannel(apnsEnvironment: String, as user: UserRecordName) async throws
        -> NotificationChannel
    /// Takes up to `limit` notifications waiting on the channel, oldest first; each is delivered once.
    /// An empty answer means none is waiting.
    /// - Throws: `NOT_FOUND` for a channel this store did not open for the user.
    func receiveNotifications(on channel: NotificationChannel, limit: Int, as user: UserRecordName) async throws
        -> [SubscriptionNotification]

    // MARK: Schema

    /// The environment whose schema the store's writes and queries follow (`SchemaRules`).
    var environment: CloudKitEnvironment { get }
    /// The CloudKit container the store reads and writes, where it knows one (`worldName`).
    var container: String? { get }
    /// The same container in another environment: on CloudKit, and in local stores, a world of its own
    /// (`StoreWorld`), with its own records and schema.
    /// - Throws: `ShareError` when that environment's store cannot be opened.
    func inEnvironment(_ environment: CloudKitEnvironment) throws -> any Store
    /// The live schema of an environment.
    /// - Throws: `ShareError` (`BAD_REQUEST`) where the store keeps no schema (`capabilities.keepsSchema`).
    func schema(in environment: CloudKitEnvironment, as user: UserRecordName) async throws -> Schema
    /// Adds record types, fields and indexes to development's schema, as saving records in development or
    /// `cktool import-schema` does; answers what changed.
    /// - Throws: `BAD_REQUEST` for a field whose type differs from the live one; nothing changes.
    func extendSchema(_ schema: Schema, as user: UserRecordName) async throws -> [SchemaChange]
    /// Copies development's schema to production (the CloudKit Console's "Deploy Schema Changes");
    /// answers what changed in production.
    /// - Throws: `BAD_REQUEST` when production would lose a type or field or see a type change; nothing
    ///   changes.
    func deploySchema(as user: UserRecordName) async throws -> [SchemaChange]

    // MARK: Maintenance

    /// Deletes everything: users, zones, records, shares. Local stores only.
    /// - Throws: `ShareError` (`BAD_REQUEST`) on a remote store.
    func reset() async throws

    /// Says the caller has finished writing for now and goes on reading (an apply, once its writes are made).
    /// The store may tidy up meanwhile, in the background: the embedded store copies its write-ahead log into
    /// the database file, which it would otherwise do as it closes, after the caller's reading. Nothing is
    /// changed that a read can see; a store with nothing to tidy does nothing.
    func finishedWriting()
}

// Users, discovery and `finishedWriting` have no default: a store that wraps another (a test's counting
// store, a retrying one) must say what it does with each, where a default would silently answer for the
// wrapped store's users and lose its discovery.
extension Store {
    /// One zone after another, for stores that write one zone a call.
    public func modifyRecords(_ writes: [ZoneWrite], as user: UserRecordName) async
        -> [Result<[RecordOutcome], any Error>]
    {
        var results: [Result<[RecordOutcome], any Error>] = []
        results.reserveCapacity(writes.count)
        for write in writes {
            // A run asked to stop starts no new request: the writes left have no result, as after a failure.
            if !results.isEmpty, StopRequest.isRequestedNow { break }
            do {
                results.append(.success(try await modifyRecords(write, as: user)))
            } catch {
                results.append(.failure(error))
                break
            }
        }
        return results
    }

    /// `modifyRecords(_:as:)` of operations that name no local file.
    public func modifyRecords(
        _ operations: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, atomic: Bool,
        as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        try await modifyRecords(ZoneWrite(operations, in: zoneID, database: database, atomic: atomic), as: user)
    }

    /// Reads the zones whole: for stores whose whole reading is cheap (the embedded store, from its indexes).
    public func zoneTags(
        _ zoneIDs: [ZoneID], since known: [ZoneTags?], in database: DatabaseScope, as user: UserRecordName
    ) async throws -> [ZoneTags?] {
        try await zoneTags(zoneIDs, in: database, as: user)
    }

    /// One zone's `zoneTags(_:in:as:)`.
    public func zoneTags(_ zoneID: ZoneID, in database: DatabaseScope, as user: UserRecordName) async throws
        -> ZoneTags?
    {
        try await zoneTags([zoneID], in: database, as: user).first ?? nil
    }

    /// Each zone's change feed read from the start, page after page, keeping only the tags: for stores whose
    /// feed is the only way to list a zone (the records come with their fields).
    public func zoneTags(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [ZoneTags?]
    {
        var answers: [ZoneTags?] = []
        for zoneID in zoneIDs { answers.append(try await tagsFromFeed(zoneID, in: database, as: user)) }
        return answers
    }

    private func tagsFromFeed(_ zoneID: ZoneID, in database: DatabaseScope, as user: UserRecordName) async throws
        -> ZoneTags?
    {
        var fold = ZoneFeedFold()
        let ending: ChangeFeedPaging.Ending
        do {
            ending = try await followZoneChanges(zoneID, in: database, since: nil, as: user) { page in
                fold.add(page)
                return true
            }
        } catch let error as ShareError where error.code == .zoneNotFound {
            return nil
        }
        return ZoneTags(
            records: fold.records.mapValues { $0.changeTag ?? "" },
            shares: fold.shares.values.sorted { $0.recordName < $1.recordName }, token: ending.token)
    }

    /// One user after another, for stores that act as one user a call.
    public func acceptShares(_ requests: [ShareAcceptances]) async throws -> [[Result<ShareMetadata, ShareError>]] {
        var results: [[Result<ShareMetadata, ShareError>]] = []
        results.reserveCapacity(requests.count)
        for request in requests {
            results.append(try await acceptShares(urls: request.urls, as: request.user))
        }
        return results
    }

    /// Accepts the shares one by one, for stores with no way to accept several at once.
    public func acceptShares(urls: [String], as user: UserRecordName) async throws
        -> [Result<ShareMetadata, ShareError>]
    {
        var results: [Result<ShareMetadata, ShareError>] = []
        for url in urls {
            do {
                results.append(.success(try await acceptShare(url: url, as: user)))
            } catch let error as ShareError {
                results.append(.failure(error))
            }
        }
        return results
    }
}
