import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ShareKit

/// A `Store` over CloudKit Web Services: `http://HOST:PORT` (a running `sharelane serve`) and `cloudkit:`
/// (Apple's service), with the same requests and the same JSON.
///
/// It sends the API token and each user's web auth token, and replaces that token with the one every
/// response hands out; signs public-database requests server-to-server when it holds a key; splits work at
/// 200 operations a request; retries `THROTTLED`, `TRY_AGAIN_LATER` and 503 after `retryAfter` with a
/// bounded backoff; and maps every error to `ShareError`, keeping `serverErrorCode` and `reason`.
/// Tokens and keys never appear in its logs or errors.
public final class WebServicesStore: Store {
    public let endpoint: WebServicesEndpoint
    /// The container every request names.
    public var container: String? { endpoint.container }
    public let retryPolicy: RetryPolicy
    let logger: Logger
    let chains: TokenChains
    /// The content digests of the service's asset checksums, so plans compare assets by content
    /// (`AssetContentDigests`).
    public let assetContents: AssetContentDigests
    /// Zones' change feeds read at the same moment, sent together (`changes/zone` takes many zones).
    let feeds: ZoneFeedBatches
    var sessions: SessionBook { chains.sessions }

    /// How long a request keeps trying to reach a service that refuses or does not answer connections,
    /// by default: a dead server is reported in seconds, not minutes.
    public static let defaultReachTimeout: Double = 8

    /// The client every store uses unless given one: it tries each connection once, for at most 2 s, and
    /// leaves retrying to the store (`reachTimeout`), so that a dead server fails fast. (The shared client
    /// retries connecting until the request's deadline, a minute.) Never shut down: it lives as long as the
    /// process.
    public static let failFastClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(2)
        // A connection carries one request at a time: the pool's default of 8 a host capped `--parallelism`
        // (10 requests in flight went out 8 at a time). The store's own bound (`RequestSlots`) decides.
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maxConnectionsPerHost
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// How many requests a store has on the wire at once unless told otherwise (`--parallelism`).
    public static let defaultParallelism = Parallelism.default
    /// The connections the client keeps to one host: a `--parallelism` above it is held to it.
    public static let maxConnectionsPerHost = 256

    /// - Parameters:
    ///   - endpoint: the service, container, environment and credentials.
    ///   - httpClient: `failFastClient` by default; the store never shuts it down.
    ///   - reachTimeout: seconds a request keeps trying to connect, with backoff, before it fails with
    ///     "cannot reach" (`--timeout`).
    ///   - parallelism: the most requests on the wire at once (`--parallelism`), and the most token chains a
    ///     user of the emulator gets.
    ///   - retryClock: what retries wait on: the system's clock, or a test's.
    ///   - logger: request lines at `debug`, retries at `info`; never tokens.
    public init(
        endpoint: WebServicesEndpoint, retryPolicy: RetryPolicy = RetryPolicy(),
        httpClient: HTTPClient = WebServicesStore.failFastClient, timeoutSeconds: Int64 = 60,
        reachTimeout: Double = WebServicesStore.defaultReachTimeout,
        parallelism: Int = WebServicesStore.defaultParallelism, retryClock: RetryClock = .system, logger: Logger
    ) {
        self.endpoint = endpoint
        self.retryPolicy = retryPolicy
        self.logger = logger
        var transport = WebServicesTransport(
            endpoint: endpoint, retryPolicy: retryPolicy, httpClient: httpClient, timeout: .seconds(timeoutSeconds),
            reachTimeout: reachTimeout, counter: RequestCounter(), logger: logger)
        transport.slots = RequestSlots(limit: parallelism)
        transport.clock = retryClock
        self.assetContents = AssetContentDigests()
        let chains = TokenChains(
            transport: transport,
            sessions: SessionBook(
                cloudKitToken: endpoint.kind == .cloudKit ? endpoint.webAuthToken : nil,
                chainsPerUser: parallelism, cloudKitEmail: endpoint.kind == .cloudKit ? endpoint.webAuthEmail : nil,
                otherCloudKitTokens: endpoint.kind == .cloudKit ? endpoint.otherWebAuthTokens : [:]))
        self.chains = chains
        self.feeds = Self.feeds(chains: chains, endpoint: endpoint)
    }

    /// The feed batches of a store on `chains` at `endpoint` (its container and environment).
    static func feeds(chains: TokenChains, endpoint: WebServicesEndpoint) -> ZoneFeedBatches {
        ZoneFeedBatches(zonesPerRequest: zoneFeedsPerRequest) { key, zones in
            let path = WireOperation.changesZone.fullPath(
                container: endpoint.container, environment: endpoint.environment, database: key.database)
            let body = try WireCoding.body(ZoneChangesRequest(zones: zones))
            return try await chains.send(path: path, body: body, auth: .user(key.user)).decoded()
        }
    }

    /// The most zones one `changes/zone` request reads.
    public static let zoneFeedsPerRequest = 20

    /// HTTP requests sent so far, retries and sign-ins included.
    public var requestCount: Int { chains.transport.counter.value }

    /// The most requests on the wire at once (`--parallelism`).
    public var parallelism: Int { chains.transport.slots.limit }

    /// The most requests that were on the wire at once so far: at most `parallelism`.
    public var peakRequestsInFlight: Int {
        get async { await chains.transport.slots.peak }
    }

    public var displayName: String { endpoint.description }

    public var capabilities: StoreCapabilities {
        StoreCapabilities(
            actsAsAnyUser: endpoint.kind == .emulator, canReset: endpoint.kind == .emulator,
            keepsSchema: endpoint.kind == .emulator,
            signsInTogether: endpoint.kind == .emulator, readsZoneTags: true)
    }

    /// The same service and signed-in users (one set of token chains), in another environment: only the
    /// environment in the path changes.
    init(sharing store: WebServicesStore, environment: CloudKitEnvironment) {
        var endpoint = store.endpoint
        endpoint.environment = WireSpelling.environment(environment)
        self.endpoint = endpoint
        self.retryPolicy = store.retryPolicy
        self.logger = store.logger
        self.chains = store.chains
        self.assetContents = store.assetContents
        self.feeds = Self.feeds(chains: store.chains, endpoint: endpoint)
    }

    // MARK: Users

    public func signIn(email: String, name: String?) async throws -> User {
        switch endpoint.kind {
        case .emulator:
            let response: SignInResponse = try await send(
                path: WireSpelling.signInPath, body: SignInRequest(emailAddress: email, name: name, for: endpoint),
                auth: .apiTokenOnly
            )
            let user = User(
                recordName: response.userRecordName, email: response.emailAddress ?? email, name: response.name ?? name)
            await sessions.signedIn(user, token: response.ckWebAuthToken)
            return user
        case .cloudKit:
            if let key = await sessions.cloudKitSession(ofEmail: email) {
                // A user with a token of their own (`sharelane login --as`): `users/current` with it says who.
                let response: WireUser = try await send(.usersCurrent, database: .public, body: nil as String?, as: key)
                guard let user = response.user else {
                    throw ShareError(.internalError, "users/current answered without a userRecordName")
                }
                await sessions.cloudKitSignedIn(user.recordName, key: key)
                return User(recordName: user.recordName, email: email, name: name ?? user.name)
            }
            let current = try await cloudKitCurrentUser()
            if let known = sessions.cloudKitEmail, known != EmailAddress.normalized(email) {
                throw ShareError(
                    .authenticationFailed,
                    "cloudkit: acts as the user signed in with `sharelane login` (\(known)); \(email) is another user, "
                        + "so what they must do is left for them to do (they sign in with `sharelane login --as "
                        + "HANDLE`)", subject: email)
            }
            let found = try await lookupUsers(emails: [email], as: current.recordName).first ?? nil
            if let found, found.recordName != current.recordName {
                throw ShareError(
                    .authenticationFailed,
                    "cloudkit: acts only as the user signed in with CLOUDKIT_WEB_AUTH_TOKEN or `sharelane login`; \(email) "
                        + "is another user (\(found.recordName)), so what they must do is left for them to do (they "
                        + "sign in with `sharelane login --as HANDLE`)",
                    subject: email)
            }
            return User(recordName: current.recordName, email: email, name: name ?? current.name)
        }
    }

    /// The newest web auth token the store holds: of `user` on the emulator, of the signed-in user on
    /// `cloudkit:` (`user` is then ignored). A secret, for a token store only (`sharelane login`).
    public func latestWebAuthToken(for user: UserRecordName?) async -> String? {
        await sessions.latestToken(for: user, kind: endpoint.kind)
    }

    /// `cloudkit:`: the newest web auth token of the other user with this email address
    /// (`WebServicesEndpoint.otherWebAuthTokens`). A secret, for a token store only.
    public func latestWebAuthToken(ofOtherUser email: String) async -> String? {
        await sessions.latestCloudKitToken(ofEmail: email)
    }

    /// Whether the store can act as the user with this email address: any user on the emulator; on
    /// `cloudkit:` the signed-in user when their address is known, and each other user with a token of their
    /// own.
    public func canActAs(email: String) async -> Bool {
        switch endpoint.kind {
        case .emulator: return true
        case .cloudKit:
            if await sessions.cloudKitSession(ofEmail: email) != nil { return true }
            return sessions.cloudKitEmail == EmailAddress.normalized(email)
        }
    }

    /// Nothing to tidy: the service keeps its own files.
    public func finishedWriting() {}

    /// On the emulator, the users this store holds no session for; on `cloudkit:` none (it acts only as its
    /// signed-in user, and says so when asked to act as another).
    public func needingSignIn(_ users: [UserRecordName]) async -> Set<UserRecordName> {
        guard endpoint.kind == .emulator else { return [] }
        return await sessions.lacking(users)
    }

    public func signInExisting(email: String) async throws -> User? {
        switch endpoint.kind {
        case .emulator:
            let response: SignInResponse
            do {
                response = try await send(
                    path: WireSpelling.signInPath,
                    body: SignInRequest(emailAddress: email, name: nil, createUser: false, for: endpoint),
                    auth: .apiTokenOnly)
            } catch let error as ShareError where error.code == .notFound {
                return nil
            }
            let user = User(
                recordName: response.userRecordName, email: response.emailAddress ?? email, name: response.name)
            await sessions.signedIn(user, token: response.ckWebAuthToken)
            return user
        case .cloudKit:
            // Apple's service creates no users: signing in only reads who the token's user is.
            return try await signIn(email: email, name: nil)
        }
    }

    public func currentUser(as user: UserRecordName) async throws -> User {
        let response: WireUser = try await send(
            .usersCurrent, database: .public, body: nil as String?, as: user)
        guard let found = response.user else {
            throw ShareError(.internalError, "users/current answered without a userRecordName")
        }
        return found
    }

    public func lookupUsers(emails: [String], as user: UserRecordName) async throws -> [User?] {
        try await inChunks(emails) { chunk in
            let response: UsersResponse = try await send(
                .usersLookupEmail, database: .public, body: LookupUsersRequest(emails: chunk), as: user)
            var byEmail: [String: User] = [:]
            for entry in response.users {
                if let user = entry.user, let email = user.email { byEmail[EmailAddress.normalized(email)] = user }
            }
            return chunk.map { byEmail[EmailAddress.normalized($0)] }
        }
    }

    // MARK: Users: discovery and phone numbers

    /// `users/discover`, 200 lookups a request.
    public func discoverUsers(_ lookups: [UserLookup], as user: UserRecordName) async throws -> [UserIdentity] {
        try await inChunks(lookups) { chunk in
            let response: UserIdentitiesResponse = try await send(
                .usersDiscover, database: .public, body: DiscoverUsersRequest(chunk), as: user)
            let users = try Self.inOrder(response.users, count: chunk.count, what: .usersDiscover)
            return zip(chunk, users).map { lookup, identity in identity.identity(for: lookup) }
        }
    }

    /// The emulator's `users/settings`; Apple's service lets each user choose in an app (`BAD_REQUEST`).
    public func setDiscoverability(_ settings: UserDiscoverability, as user: UserRecordName) async throws {
        guard endpoint.kind == .emulator else {
            throw ShareError(
                .badRequest,
                "\(displayName) does not set users' discoverability: on Apple's service each user chooses it in an app")
        }
        let _: UserSettingsRequest = try await send(
            .usersSettings, database: .public, body: UserSettingsRequest(settings), as: user)
    }

    /// The emulator's `users/settings` (GET); Apple's service does not tell (none, not discoverable).
    public func discoverability(as user: UserRecordName) async throws -> UserDiscoverability {
        guard endpoint.kind == .emulator else { return UserDiscoverability() }
        let response: UserSettingsRequest = try await send(
            .usersSettings, database: .public, body: nil as String?, as: user)
        return response.settings
    }

    // MARK: Zones

    public func listZones(in database: DatabaseScope, as user: UserRecordName) async throws -> [Zone] {
        let response: ZonesResponse = try await send(
            .zonesList, database: database, body: nil as String?, as: user)
        return try response.zones.map { try $0.result.get() }
    }

    public func lookupZones(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    {
        try await inChunks(zoneIDs) { chunk in
            let response: ZonesResponse = try await send(
                .zonesLookup, database: database, body: LookupZonesRequest(chunk), as: user)
            return try Self.inOrder(response.zones.map(\.result), count: chunk.count, what: .zonesLookup)
        }
    }

    public func modifyZones(_ operations: [ZoneOperation], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [Result<Zone, ShareError>]
    {
        try await inChunks(operations) { chunk in
            let (response, resent): (ZonesResponse, Bool) = try await sendNoting(
                .zonesModify, database: database, body: ModifyZonesRequest(chunk), as: user)
            let results = try Self.inOrder(response.zones.map(\.result), count: chunk.count, what: .zonesModify)
            guard resent else { return results }
            // Sent again after a lost answer: a zone its earlier attempt deleted is gone (creating a zone that
            // exists answers the zone, so creations need nothing).
            return zip(chunk, results).map { operation, result in
                if operation.kind == .delete, case .failure(let error) = result, error.code == .zoneNotFound {
                    return .success(Zone(zoneID: operation.zoneID))
                }
                return result
            }
        }
    }

    // MARK: Records and shares

    public func lookupRecords(
        _ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        try await inChunks(recordNames) { chunk in
            let response: RecordsResponse = try await send(
                .recordsLookup, database: database,
                body: LookupRecordsRequest(recordNames: chunk, zoneID: zoneID), as: user)
            return try await knowingAssetContents(
                try Self.inOrder(
                    response.records.map { $0.outcome(in: zoneID) }, count: chunk.count, what: .recordsLookup))
        }
    }

    public func queryRecords(
        _ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    ) async throws -> QueryPage {
        let response: RecordsResponse = try await send(
            .recordsQuery, database: database, body: QueryRecordsRequest(query, in: zoneID), as: user)
        let records = try response.records.map { entry in
            if let error = entry.error(in: zoneID) { throw error }
            return entry.record(in: zoneID)
        }
        return QueryPage(
            records: try await knowingAssetContents(records), continuationMarker: response.continuationMarker)
    }

    /// Applies the operations, 200 a request; `atomic` holds within each request of 200.
    /// The local files the saves name (`write.assetFiles`) are uploaded first, through `assets/upload`.
    public func modifyRecords(_ write: ZoneWrite, as user: UserRecordName) async throws -> [RecordOutcome] {
        try await inChunks(write.operations) { chunk in
            try await modifyChunk(
                chunk, in: write.zoneID, database: write.database, atomic: write.atomic, files: write.assetFiles,
                as: user)
        }
    }

    /// One request of at most 200 operations; operations that failed with `THROTTLED` or `TRY_AGAIN_LATER`
    /// are sent again after their `retryAfter` (an atomic request is sent again whole, as all its operations
    /// failed with it). The asset uploads, the request's own retries and these share one `RetryBudget`.
    /// Operations whose request was sent again after a lost connection settle what their earlier attempt did
    /// (`settlingLostAnswers`).
    private func modifyChunk(
        _ chunk: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, atomic: Bool, files: AssetFiles,
        as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        try await RetryBudget.opening(retryPolicy) { budget in
            try await modifyChunk(
                chunk, in: zoneID, database: database, atomic: atomic, files: files, as: user, budget: budget)
        }
    }

    private func modifyChunk(
        _ chunk: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, atomic: Bool, files: AssetFiles,
        as user: UserRecordName, budget: RetryBudget
    ) async throws -> [RecordOutcome] {
        var outcomes = [RecordOutcome?](repeating: nil, count: chunk.count)
        var pending = Array(chunk.indices)
        var landed = Set<Int>()
        // Local files in asset fields go up through assets/upload once, first; every attempt carries their
        // receipts.
        let uploaded = try await uploadingAssets(chunk, in: zoneID, database: database, files: files, as: user)
        while true {
            let batch = pending.map { uploaded[$0] }
            var request = ModifyRecordsRequest(batch, in: zoneID, atomic: atomic)
            // Records that are created or replaced whole are, once saved, the fields sent: the answer need not
            // carry them back (`desiredKeys`: none but a share's title, a share's one field, when the request
            // saves shares too, as each zone's first request of an apply does), which halves what both sides
            // encode and decode.
            let echoSentFields = batch.allSatisfy { Self.savesWholeRecord($0) || Self.isShare($0) }
            if echoSentFields {
                request.desiredKeys = batch.contains(where: Self.isShare) ? [shareTitleField] : []
            }
            let (response, resent): (RecordsResponse, Bool) = try await sendNoting(
                .recordsModify, database: database, body: request, as: user)
            if resent { landed.formUnion(pending) }
            var answered = Self.existsForCreates(
                batch,
                try Self.inOrder(
                    response.records.map { $0.outcome(in: zoneID) }, count: batch.count, what: .recordsModify))
            if echoSentFields {
                for index in answered.indices {
                    guard case .saved(var saved) = answered[index], case .record(let sent) = batch[index].item
                    else { continue }
                    saved.fields = sent.fields
                    answered[index] = .saved(saved)
                }
            }
            if !landed.isEmpty {
                answered = try await settlingLostAnswers(
                    batch, answered, landed: Set(pending.indices.filter { landed.contains(pending[$0]) }),
                    in: zoneID, database: database, atomic: atomic, as: user)
            }
            let retryable = answered.indices.filter { RetryPolicy.isRetryable(answered[$0].error?.code) }
            for (index, outcome) in zip(pending, answered) { outcomes[index] = outcome }
            guard !retryable.isEmpty,
                case (let wait, let attempt)? = budget.spend(
                    retryAfter: retryable.compactMap { answered[$0].error?.retryAfter }.max())
            else { break }
            let notice = StoreRetry(
                reason: RetryPolicy.reason(codes: retryable.map { answered[$0].error?.code }), seconds: wait,
                attempt: attempt, operation: WireOperation.recordsModify.description)
            logger.info(
                "\(notice); sending those records again",
                metadata: ["records": "\(retryable.count)", "attempt": "\(attempt)", "wait": "\(wait)s"])
            notice.tell()
            try await chains.transport.clock.sleep(wait)
            pending = atomic ? pending : retryable.map { pending[$0] }
        }
        return try await knowingAssetContents(
            outcomes.enumerated().map { index, outcome in
                outcome ?? .failed(recordName: chunk[index].recordName, ShareError(.internalError, "no answer"))
            })
    }

    /// Whether the operation writes a record's every field (a create or a replace, not a share).
    static func savesWholeRecord(_ operation: RecordOperation) -> Bool {
        guard case .record = operation.item else { return false }
        return [.create, .replace, .forceReplace].contains(operation.kind)
    }

    /// Whether the operation saves or deletes a share.
    static func isShare(_ operation: RecordOperation) -> Bool {
        guard case .share = operation.item else { return false }
        return true
    }

}
