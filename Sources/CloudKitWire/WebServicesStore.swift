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
    public let retryPolicy: RetryPolicy
    private let httpClient: HTTPClient
    private let logger: Logger
    private let sessions: SessionBook
    private let counter = RequestCounter()
    private let timeout: TimeAmount

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
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    private let reachTimeout: Double

    /// - Parameters:
    ///   - endpoint: the service, container, environment and credentials.
    ///   - httpClient: `failFastClient` by default; the store never shuts it down.
    ///   - reachTimeout: seconds a request keeps trying to connect, with backoff, before it fails with
    ///     "cannot reach" (`--timeout`).
    ///   - logger: request lines at `debug`, retries at `notice`; never tokens.
    public init(
        endpoint: WebServicesEndpoint, retryPolicy: RetryPolicy = RetryPolicy(),
        httpClient: HTTPClient = WebServicesStore.failFastClient, timeoutSeconds: Int64 = 60,
        reachTimeout: Double = WebServicesStore.defaultReachTimeout, logger: Logger
    ) {
        self.endpoint = endpoint
        self.retryPolicy = retryPolicy
        self.httpClient = httpClient
        self.logger = logger
        self.reachTimeout = reachTimeout
        self.timeout = .seconds(timeoutSeconds)
        self.sessions = SessionBook(cloudKitToken: endpoint.kind == .cloudKit ? endpoint.webAuthToken : nil)
    }

    /// HTTP requests sent so far, retries and sign-ins included.
    public var requestCount: Int { counter.value }

    public var displayName: String { endpoint.description }

    public var capabilities: StoreCapabilities {
        StoreCapabilities(actsAsAnyUser: endpoint.kind == .emulator, canReset: false)
    }

    // MARK: Users

    public func signIn(email: String, name: String?) async throws -> User {
        switch endpoint.kind {
        case .emulator:
            let response: SignInResponse = try await send(
                path: WireSpelling.signInPath, body: SignInRequest(emailAddress: email, name: name), auth: .apiTokenOnly
            )
            let user = User(
                recordName: response.userRecordName, email: response.emailAddress ?? email, name: response.name ?? name)
            await sessions.signedIn(user, token: response.ckWebAuthToken)
            return user
        case .cloudKit:
            let current = try await cloudKitCurrentUser()
            let found = try await lookupUsers(emails: [email], as: current.recordName).first ?? nil
            if let found, found.recordName != current.recordName {
                throw ShareError(
                    .authenticationFailed,
                    "cloudkit: acts only as the user signed in with CLOUDKIT_WEB_AUTH_TOKEN; \(email) is another "
                        + "user (\(found.recordName)), so what they must do is left for them to do",
                    subject: email)
            }
            return User(recordName: current.recordName, email: email, name: name ?? current.name)
        }
    }

    public func signInExisting(email: String) async throws -> User? {
        switch endpoint.kind {
        case .emulator:
            let response: SignInResponse
            do {
                response = try await send(
                    path: WireSpelling.signInPath, body: SignInRequest(emailAddress: email, name: nil, createUser: false),
                    auth: .apiTokenOnly)
            } catch let error as ShareError where error.code == .notFound {
                return nil
            }
            let user = User(recordName: response.userRecordName, email: response.emailAddress ?? email, name: response.name)
            await sessions.signedIn(user, token: response.ckWebAuthToken)
            return user
        case .cloudKit:
            // Apple's service creates no users: signing in only reads who the token's user is.
            return try await signIn(email: email, name: nil)
        }
    }

    public func currentUser(as user: UserRecordName) async throws -> User {
        let response: WireUser = try await send(
            operation: "users/current", database: .public, body: nil as String?, as: user)
        guard let found = response.user else {
            throw ShareError(.internalError, "users/current answered without a userRecordName")
        }
        return found
    }

    public func lookupUsers(emails: [String], as user: UserRecordName) async throws -> [User?] {
        var found: [User?] = []
        for chunk in emails.chunked(CloudKitLimits.operationsPerRequest) {
            let response: UsersResponse = try await send(
                operation: "users/lookup/email", database: .public, body: LookupUsersRequest(emails: chunk), as: user)
            var byEmail: [String: User] = [:]
            for entry in response.users {
                if let user = entry.user, let email = user.email { byEmail[email.lowercased()] = user }
            }
            found += chunk.map { byEmail[$0.lowercased()] }
        }
        return found
    }

    // MARK: Zones

    public func listZones(in database: DatabaseScope, as user: UserRecordName) async throws -> [Zone] {
        let response: ZonesResponse = try await send(
            operation: "zones/list", database: database, body: nil as String?, as: user)
        return try response.zones.map { try $0.result.get() }
    }

    public func lookupZones(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    {
        var results: [Result<Zone, ShareError>] = []
        for chunk in zoneIDs.chunked(CloudKitLimits.operationsPerRequest) {
            let response: ZonesResponse = try await send(
                operation: "zones/lookup", database: database, body: LookupZonesRequest(chunk), as: user)
            results += try Self.inOrder(response.zones.map(\.result), count: chunk.count, what: "zones/lookup")
        }
        return results
    }

    public func modifyZones(_ operations: [ZoneOperation], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [Result<Zone, ShareError>]
    {
        var results: [Result<Zone, ShareError>] = []
        for chunk in operations.chunked(CloudKitLimits.operationsPerRequest) {
            let response: ZonesResponse = try await send(
                operation: "zones/modify", database: database, body: ModifyZonesRequest(chunk), as: user)
            results += try Self.inOrder(response.zones.map(\.result), count: chunk.count, what: "zones/modify")
        }
        return results
    }

    // MARK: Records and shares

    public func lookupRecords(
        _ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        var outcomes: [RecordOutcome] = []
        for chunk in recordNames.chunked(CloudKitLimits.operationsPerRequest) {
            let response: RecordsResponse = try await send(
                operation: "records/lookup", database: database,
                body: LookupRecordsRequest(recordNames: chunk, zoneID: zoneID), as: user)
            outcomes += try Self.inOrder(
                response.records.map { $0.outcome(in: zoneID) }, count: chunk.count, what: "records/lookup")
        }
        return outcomes
    }

    public func queryRecords(
        _ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    ) async throws -> QueryPage {
        let response: RecordsResponse = try await send(
            operation: "records/query", database: database, body: QueryRecordsRequest(query, in: zoneID), as: user)
        let records = try response.records.map { entry in
            if let error = entry.error(in: zoneID) { throw error }
            return entry.record(in: zoneID)
        }
        return QueryPage(records: records, continuationMarker: response.continuationMarker)
    }

    /// Applies the operations, 200 a request; `atomic` holds within each request of 200.
    public func modifyRecords(
        _ operations: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, atomic: Bool,
        as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        var outcomes: [RecordOutcome] = []
        for chunk in operations.chunked(CloudKitLimits.operationsPerRequest) {
            outcomes += try await modifyChunk(chunk, in: zoneID, database: database, atomic: atomic, as: user)
        }
        return outcomes
    }

    /// One request of at most 200 operations; operations that failed with `THROTTLED` or `TRY_AGAIN_LATER`
    /// are sent again after their `retryAfter`, within the retry policy (an atomic request is sent again
    /// whole, as all its operations failed with it).
    private func modifyChunk(
        _ chunk: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, atomic: Bool,
        as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        var outcomes = [RecordOutcome?](repeating: nil, count: chunk.count)
        var pending = Array(chunk.indices)
        var attempt = 1
        while true {
            let batch = pending.map { chunk[$0] }
            var request = ModifyRecordsRequest(batch, in: zoneID, atomic: atomic)
            // Records that are created or replaced whole are, once saved, the fields sent: the answer need not
            // carry them back (`desiredKeys: []`), which halves what both sides encode and decode.
            let echoSentFields = batch.allSatisfy(Self.savesWholeRecord)
            if echoSentFields { request.desiredKeys = [] }
            let response: RecordsResponse = try await send(
                operation: "records/modify", database: database, body: request, as: user)
            var answered = try Self.inOrder(
                response.records.map { $0.outcome(in: zoneID) }, count: batch.count, what: "records/modify")
            if echoSentFields {
                for index in answered.indices {
                    guard case .saved(var saved) = answered[index], saved.fields.isEmpty,
                        case .record(let sent) = batch[index].item
                    else { continue }
                    saved.fields = sent.fields
                    answered[index] = .saved(saved)
                }
            }
            let retryable = answered.indices.filter {
                [.throttled, .tryAgainLater].contains(answered[$0].error?.code)
            }
            for (index, outcome) in zip(pending, answered) { outcomes[index] = outcome }
            guard !retryable.isEmpty, attempt < retryPolicy.maxAttempts else { break }
            let retryAfter = retryable.compactMap { answered[$0].error?.retryAfter }.max()
            let wait = retryPolicy.delay(afterAttempt: attempt, retryAfter: retryAfter)
            logger.notice(
                "CloudKit asked to wait for some records; retrying them",
                metadata: ["records": "\(retryable.count)", "attempt": "\(attempt + 1)", "wait": "\(wait)s"])
            try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
            pending = atomic ? pending : retryable.map { pending[$0] }
            attempt += 1
        }
        return outcomes.enumerated().map { index, outcome in
            outcome ?? .failed(recordName: chunk[index].recordName, ShareError(.internalError, "no answer"))
        }
    }

    /// Whether the operation writes a record's every field (a create or a replace, not a share).
    static func savesWholeRecord(_ operation: RecordOperation) -> Bool {
        guard case .record = operation.item else { return false }
        return [.create, .replace, .forceReplace].contains(operation.kind)
    }

    // MARK: Sharing

    public func resolveShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try await shareRequest("records/resolve", url: url, as: user)
    }

    public func acceptShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try await shareRequest("records/accept", url: url, as: user)
    }

    /// One `records/accept` request per 200 shares.
    public func acceptShares(urls: [String], as user: UserRecordName) async throws
        -> [Result<ShareMetadata, ShareError>]
    {
        var results: [Result<ShareMetadata, ShareError>] = []
        for start in stride(from: 0, to: urls.count, by: CloudKitLimits.operationsPerRequest) {
            let chunk = urls[start..<min(start + CloudKitLimits.operationsPerRequest, urls.count)]
            let guids = chunk.map(ShortGUIDsRequest.shortGUID(fromURL:))
            let response: ShareResultsResponse = try await send(
                operation: "records/accept", database: .public, body: ShortGUIDsRequest(guids), as: user)
            for (index, guid) in guids.enumerated() {
                guard index < response.results.count else {
                    results.append(.failure(ShareError(.internalError, "records/accept answered no result", subject: "share \(guid)")))
                    continue
                }
                do {
                    results.append(.success(try response.results[index].metadata()))
                } catch let error as ShareError {
                    results.append(.failure(error))
                }
            }
        }
        return results
    }

    /// Leaves as CloudKit does: the participant deletes the share from its shared database.
    public func leaveShare(recordName: String, in zoneID: ZoneID, as user: UserRecordName) async throws {
        var record = WireRecord(recordName: recordName, recordType: shareRecordType)
        record.recordChangeTag = nil
        let request = ModifyRecordsRequest(
            operations: [.init(operationType: OperationKind.forceDelete.rawValue, record: record)],
            zoneID: WireZoneID(zoneID), atomic: false)
        let response: RecordsResponse = try await send(
            operation: "records/modify", database: .shared, body: request, as: user)
        if let error = response.records.first?.error(in: zoneID) { throw error }
    }

    // MARK: Changes

    public func databaseChanges(in database: DatabaseScope, since token: ChangeToken?, as user: UserRecordName)
        async throws -> DatabaseChanges
    {
        let response: DatabaseChangesResponse = try await send(
            operation: "changes/database", database: database,
            body: DatabaseChangesRequest(syncToken: token?.rawValue), as: user)
        return response.changes
    }

    public func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName
    ) async throws -> ZoneChanges {
        let response: ZoneChangesResponse = try await send(
            operation: "changes/zone", database: database,
            body: ZoneChangesRequest(zoneID: zoneID, syncToken: token?.rawValue, resultsLimit: resultsLimit), as: user)
        guard let first = response.zones.first else {
            throw ShareError(.internalError, "changes/zone answered no zone", subject: "zone \(zoneID.zoneName)")
        }
        return try first.changes(in: zoneID)
    }

    // MARK: Maintenance

    public func reset() async throws {
        throw ShareError(
            .badRequest,
            "\(displayName) cannot be reset from here: reset works on local stores only (sqlite:, memory:); "
                + "stop `sharelane serve` and delete its store file instead")
    }

    // MARK: - Requests

    private func shareRequest(_ operation: String, url: String, as user: UserRecordName) async throws -> ShareMetadata {
        let guid = ShortGUIDsRequest.shortGUID(fromURL: url)
        let response: ShareResultsResponse = try await send(
            operation: operation, database: .public, body: ShortGUIDsRequest([guid]), as: user)
        guard let first = response.results.first else {
            throw ShareError(.internalError, "\(operation) answered no result", subject: "share \(guid)")
        }
        return try first.metadata()
    }

    private func cloudKitCurrentUser() async throws -> User {
        if let known = await sessions.cloudKitUser { return known }
        let response: WireUser = try await send(
            operation: "users/current", database: .public, body: nil as String?, as: nil)
        guard let user = response.user else {
            throw ShareError(.internalError, "users/current answered without a userRecordName")
        }
        await sessions.setCloudKitUser(user)
        return user
    }

    /// How a request authenticates.
    enum Auth {
        /// `ckAPIToken` only (the emulator's sign-in).
        case apiTokenOnly
        /// `ckAPIToken` and the web auth token of this user (nil: the `cloudkit:` signed-in user).
        case user(UserRecordName?)
        /// Server-to-server signature.
        case signed
    }

    /// A new emulator session for `user`, signed in with the email address of `session`; nil when that
    /// sign-in fails (the user keeps the sessions they have).
    private func addSession(for user: UserRecordName, like session: SessionBook.Session) async -> SessionBook.Session? {
        guard let email = session.email,
            let body = try? WireCoding.bodyEncoder().encode(SignInRequest(emailAddress: email, name: session.name)),
            let reply = try? await attempt(path: WireSpelling.signInPath, body: body, auth: .apiTokenOnly, token: nil),
            let signedIn: SignInResponse = try? reply.decoded(), signedIn.userRecordName == user
        else {
            await sessions.growthFailed(for: user)
            return nil
        }
        return await sessions.addSession(for: user, email: email, name: session.name, token: signedIn.ckWebAuthToken)
    }

    /// Sends a database request as `user`, choosing how it authenticates.
    private func send<Body: Encodable & Sendable, Response: Decodable>(
        operation: String, database: DatabaseScope, body: Body?, as user: UserRecordName?
    ) async throws -> Response {
        let path =
            "\(WireSpelling.databasePathPrefix)/\(endpoint.container)/\(endpoint.environment)/\(database.rawValue)/\(operation)"
        let auth: Auth
        // Server-to-server signatures reach the public database's records and zones. Operations about the
        // user (who they are, accepting a share) go with the user's web auth token when there is one.
        let aboutTheUser =
            operation.hasPrefix("users/") || operation == "records/resolve" || operation == "records/accept"
        if endpoint.kind == .cloudKit, database == .public, endpoint.signer != nil,
            !(aboutTheUser && endpoint.webAuthToken != nil)
        {
            auth = .signed
        } else {
            auth = .user(user)
        }
        return try await send(path: path, body: body, auth: auth)
    }

    private func send<Body: Encodable & Sendable, Response: Decodable>(
        path: String, body: Body?, auth: Auth
    ) async throws -> Response {
        let encoder = WireCoding.bodyEncoder()
        let bodyData: Data?
        do {
            bodyData = try body.map { try encoder.encode($0) }
        } catch {
            throw ShareError(.badRequest, "cannot encode the request for \(path): \(error)")
        }
        switch auth {
        case .apiTokenOnly, .signed:
            return try await attempt(path: path, body: bodyData, auth: auth, token: nil).decoded()
        case .user(let user):
            let picked = try await sessions.session(for: user, kind: endpoint.kind, displayName: displayName)
            let session: SessionBook.Session
            if endpoint.kind == .emulator, let user, await sessions.shouldGrow(user) {
                // Every session of this user is busy: sign in once more, for a token chain of its own, so that
                // several requests as this user (writes to several zones) are under way at once.
                session = await addSession(for: user, like: picked) ?? picked
            } else {
                session = picked
            }
            await sessions.begin(session.key)
            let reply: Reply
            do {
                reply = try await gatedRequest(session: session, path: path, body: bodyData, auth: auth)
            } catch {
                await sessions.end(session.key)
                throw error
            }
            await sessions.end(session.key)
            return try reply.decoded()
        }
    }

    /// Sends one request on a session's token chain, one at a time per session: each request needs the token
    /// the previous answer handed out.
    private func gatedRequest(session: SessionBook.Session, path: String, body bodyData: Data?, auth: Auth)
        async throws -> Reply
    {
        try await session.gate.run { () async throws -> Reply in
            var reSignedIn = false
            while true {
                let token = await self.sessions.token(of: session.key)
                let reply = try await self.attempt(path: path, body: bodyData, auth: auth, token: token)
                if let next = reply.nextToken { await self.sessions.rotate(session.key, to: next) }
                if reply.status == 421, self.endpoint.kind == .emulator, !reSignedIn, let email = session.email {
                    // The emulator's token ran out (or it restarted): sign in again once, then retry.
                    reSignedIn = true
                    let signInBody = try WireCoding.bodyEncoder().encode(
                        SignInRequest(emailAddress: email, name: session.name))
                    let again: SignInResponse = try await self.attempt(
                        path: WireSpelling.signInPath, body: signInBody, auth: .apiTokenOnly, token: nil
                    ).decoded()
                    await self.sessions.rotate(session.key, to: again.ckWebAuthToken)
                    continue
                }
                if reply.status == 421, self.endpoint.kind == .cloudKit {
                    let reason = reply.wireError?.reason ?? "sign-in needed"
                    throw ShareError(
                        .authenticationRequired,
                        "CloudKit refused the web auth token (\(reason)): sign in again and set "
                            + "CLOUDKIT_WEB_AUTH_TOKEN to the new token (Docs/CloudKit.md)")
                }
                return reply
            }
        }
    }

    /// One request with retries of `THROTTLED`, `TRY_AGAIN_LATER` and 503, and of connections the service
    /// refused or did not answer, for at most `reachTimeout` seconds.
    private func attempt(path: String, body: Data?, auth: Auth, token: String?) async throws -> Reply {
        var attemptNumber = 1
        var token = token
        let started = ContinuousClock.now
        var connectAttempts = 0
        while true {
            let reply: Reply
            do {
                reply = try await execute(path: path, body: body, auth: auth, token: token)
            } catch let failure as ConnectionFailure {
                // Nothing reached the service, so sending again cannot apply anything twice.
                connectAttempts += 1
                let elapsed = Self.seconds(since: started)
                let wait = min(2, 0.25 * Double(1 << min(connectAttempts - 1, 8)))
                guard elapsed + wait < reachTimeout else {
                    throw ShareError(
                        .tryAgainLater,
                        "cannot reach \(displayName) (\(path)): \(failure.reason); tried \(connectAttempts) "
                            + "time\(connectAttempts == 1 ? "" : "s") in \(String(format: "%.1f", elapsed)) s. Check that "
                            + (endpoint.kind == .emulator ? "`sharelane serve` is running at that address" : "the service is reachable")
                            + ", or give it longer with --timeout")
                }
                // The final error tells the story; each retry is a debug line.
                logger.debug(
                    "cannot reach the service; retrying",
                    metadata: ["path": "\(path)", "attempt": "\(connectAttempts + 1)", "wait": "\(wait)s"])
                try await Task.sleep(for: .seconds(wait))
                continue
            }
            if let next = reply.nextToken { token = next }
            guard reply.isRetryable, attemptNumber < retryPolicy.maxAttempts else { return reply }
            let wait = retryPolicy.delay(afterAttempt: attemptNumber, retryAfter: reply.retryAfter)
            logger.notice(
                "CloudKit asked to wait; retrying",
                metadata: [
                    "path": "\(path)", "status": "\(reply.status)", "attempt": "\(attemptNumber + 1)",
                    "wait": "\(wait)s",
                ])
            try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
            attemptNumber += 1
        }
    }

    private func execute(path: String, body: Data?, auth: Auth, token: String?) async throws -> Reply {
        var query: [(String, String)] = []
        if case .signed = auth {
        } else if let apiToken = endpoint.apiToken {
            query.append((WireSpelling.apiTokenParameter, apiToken))
        }
        if let token { query.append((WireSpelling.webAuthTokenParameter, token)) }
        let queryString = query.map { "\($0.0)=\(Self.percentEncoded($0.1))" }.joined(separator: "&")
        var request = HTTPClientRequest(url: endpoint.baseURL + path + (queryString.isEmpty ? "" : "?" + queryString))
        request.method = body == nil ? .GET : .POST
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        if case .signed = auth, let signer = endpoint.signer {
            do {
                for header in try signer.headers(date: Date(), body: body ?? Data(), subpath: path) {
                    request.headers.add(name: header.name, value: header.value)
                }
            } catch {
                throw ShareError(.authenticationFailed, "cannot sign the request for \(path) with \(signer)")
            }
        }
        counter.increment()
        let started = Date()
        let response: HTTPClientResponse
        let data: Data
        do {
            response = try await httpClient.execute(request, timeout: timeout)
        } catch {
            if let failure = ConnectionFailure(error) { throw failure }
            throw ShareError(
                .tryAgainLater,
                "cannot reach \(displayName) (\(path)): \(error); check that the service is running and reachable"
                    + (endpoint.kind == .emulator ? " (`sharelane serve`)" : ""))
        }
        do {
            let buffer = try await response.body.collect(upTo: 256 << 20)
            data = Data(buffer.readableBytesView)
        } catch {
            throw ShareError(
                .tryAgainLater,
                "cannot reach \(displayName) (\(path)): \(error); check that the service is running and reachable"
                    + (endpoint.kind == .emulator ? " (`sharelane serve`)" : ""))
        }
        let status = Int(response.status.code)
        logger.debug(
            "\(request.method.rawValue) \(path) → \(status)",
            metadata: ["ms": "\(Int(Date().timeIntervalSince(started) * 1000))"])
        let nextToken = response.headers.first(name: WireSpelling.webAuthTokenHeader).flatMap { $0.isEmpty ? nil : $0 }
        // A server that reflects the request (an error quoting the URL) must not hand our tokens to the terminal.
        let sent = [endpoint.apiToken, token].compactMap { $0 }
        return Reply(
            path: path, status: status, data: Self.masking(sent, in: data), nextToken: nextToken, service: displayName)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Matches a response array to the request, which must have one entry per item.
    private static func inOrder<T>(_ items: [T], count: Int, what: String) throws -> [T] {
        guard items.count == count else {
            throw ShareError(
                .internalError, "\(what) answered \(items.count) entries for \(count) items; the response is malformed")
        }
        return items
    }

    /// `data` with every token of `secrets` masked (`Credentials.masking`), untouched when none occurs in it.
    static func masking(_ secrets: [String], in data: Data) -> Data {
        let present = secrets.contains { secret in
            secret.count >= 4 && Credentials.forms(of: secret).contains { data.range(of: Data($0.utf8)) != nil }
        }
        guard present else { return data }
        return Data(Credentials.masking(secrets, in: String(decoding: data, as: UTF8.self)).utf8)
    }

    /// Percent-encodes a query value, `+`, `/` and `=` included.
    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// One HTTP answer, before decoding.
struct Reply: Sendable {
    var path: String
    var status: Int
    var data: Data
    var nextToken: String?
    var service: String

    var wireError: WireError? {
        guard !(200..<300).contains(status) else { return nil }
        return try? JSONDecoder().decode(WireError.self, from: data)
    }

    var retryAfter: Double? { wireError?.retryAfter }

    var isRetryable: Bool {
        if status == 503 || status == 429 { return true }
        guard let code = wireError?.serverErrorCode else { return false }
        return code == ServerErrorCode.throttled.rawValue || code == ServerErrorCode.tryAgainLater.rawValue
    }

    /// The body as `T`, or the error it carries as a `ShareError`.
    func decoded<T: Decodable>() throws -> T {
        if !(200..<300).contains(status) {
            if let wireError { throw wireError.shareError(subject: nil) }
            let code = WireSpelling.code(httpStatus: status)
            let text = String(decoding: data.prefix(300), as: UTF8.self)
            throw ShareError(code, "\(service) answered HTTP \(status) to \(path): \(text)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ShareError(
                .internalError, "\(service) answered \(path) with JSON sharelane cannot read: \(error)")
        }
    }
}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}

/// A connection the service refused or never answered: nothing of the request reached it, so it may be sent
/// again. Other transport errors (a connection reset mid-answer) may have reached it, and are not retried.
struct ConnectionFailure: Error {
    var reason: String

    init?(_ error: any Error) {
        if let io = error as? IOError, [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL].contains(io.errnoCode) {
            reason = "connection refused or unreachable (\(io))"
        } else if let client = error as? HTTPClientError, client == .connectTimeout {
            reason = "no answer to the connection within 2 s"
        } else if let channel = error as? ChannelError, case .connectTimeout = channel {
            reason = "no answer to the connection within 2 s"
        } else if String(describing: type(of: error)) == "NIOConnectionError" {
            // NIOPosix's error for a connection that could not be made to any address (DNS included).
            reason = "\(error)"
        } else {
            return nil
        }
    }
}
