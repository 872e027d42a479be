import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ShareKit

/// Answers CloudKit Web Services operations over a `Store`: decodes the JSON, calls the store as the
/// request's user (`AuthenticationMiddleware` put it on the context) and encodes the answer. It holds no
/// access rules of its own (the store enforces them) and no HTTP concerns (authentication and logging are
/// middleware; a thrown `ShareError` answers as CloudKit does).
struct EmulatorService: Sendable {
    /// One store per container and environment (`StoreWorld`): a request reaches the world its path names.
    let worlds: any StoreWorlds
    /// Who signed in, and in which worlds they already have a user.
    let identities = EmulatorIdentities()
    /// The last requests, for the console's Requests page.
    let requests = RequestHistory()
    /// Each world's requests kept apart from its resets and restores.
    let gate = WorldGate()
    /// Reset points, named snapshots and the seeded recipes' people (`EmulatorFixture.swift`).
    let fixture = FixtureState()
    let configuration: EmulatorConfiguration
    let tokens: TokenIssuer
    /// The one-time tickets of sign-in `redirectURL`s (EmulatorService+SignInPage).
    let tickets: SignInTickets
    /// The containers and environments requests named, for the console's overview.
    let containers = ConsoleContainerLog()
    /// The notification channels `tokens/create` opened, for the webcourier long-poll.
    let channels = WebcourierChannels()
    /// The one-time upload URLs `assets/upload` handed out (EmulatorService+Assets).
    let uploads = AssetUploadTickets()
    /// What makes a download URL good, in one world, until it expires (EmulatorService+Assets).
    let downloads: AssetDownloads

    // MARK: Sign-in

    /// `POST /auth/signin`. With `container` and `environment` in the body (sharelane's own client sends
    /// them) the user is signed in to that world, and `createUser: false` looks there only; without them, as
    /// a person signing in to iCloud, the user gets a user record in each world the token is first used in.
    func signIn(_ request: Request, context: EmulatorRequestContext) async throws -> Response {
        var request = request
        let body = try await readBody(&request)
        let signIn = try decode(SignInRequest.self, from: body)
        let world = try signIn.world()
        let user: User
        if signIn.createUser == false {
            guard let existing = try await existingUser(email: signIn.emailAddress, in: world) else {
                throw Self.noSuchUser(signIn.emailAddress, in: world)
            }
            user = existing
        } else {
            user = try await self.signIn(email: signIn.emailAddress, name: signIn.name, in: world)
        }
        context.caller.user = user.recordName
        let token = await tokens.issue(for: user.recordName)
        var response = WireResponse.json(try encode(SignInResponse(ckWebAuthToken: token, user: user)))
        if let name = HTTPField.Name(WireSpelling.webAuthTokenHeader) { response.headers[name] = token }
        return response
    }

    /// `POST /auth/signin/batch`: `signIn` for up to 200 users at once (`SignInBatchRequest`), as sharelane's
    /// own client signs in a recipe's users; in a world, in one store call (one transaction on the embedded
    /// store). One answer entry a user, in order: a token, or that user's error.
    func signInBatch(_ request: Request, context: EmulatorRequestContext) async throws -> Response {
        var request = request
        let batch = try decode(SignInBatchRequest.self, from: try await readBody(&request))
        try CloudKitLimits.checkOperationCount(batch.users.count, of: "users")
        let world = try batch.world()
        let create = batch.createUser != false
        var entries: [SignInBatchResponse.Entry?] = batch.users.map { person in
            EmailAddress.check(person.emailAddress).map { .init(emailAddress: person.emailAddress, error: $0) }
        }
        let people = batch.users.indices.filter { entries[$0] == nil }.map { ($0, batch.users[$0]) }
        var found: [Result<User?, ShareError>] = []
        if let world {
            if create { try await takePendingResetPoint(world) }
            let store = try worlds.store(for: world)
            found =
                create
                ? try await store.signIn(people.map { UserSignIn(email: $0.1.emailAddress, name: $0.1.name) })
                    .map { $0.map(Optional.some) }
                : try await store.signInExisting(people.map(\.1.emailAddress))
        } else {
            for (_, person) in people {
                do {
                    found.append(
                        .success(
                            create
                                ? try await signIn(email: person.emailAddress, name: person.name, in: nil)
                                : try await existingUser(email: person.emailAddress, in: nil)))
                } catch let error as ShareError {
                    found.append(.failure(error))
                }
            }
        }
        for ((index, person), result) in zip(people, found) {
            switch result {
            case .success(let user?):
                // As `signIn(email:name:in:)` keeps a user signed in to a world (without one, it kept them).
                if create, let world {
                    await identities.signedIn(user, in: world)
                    await identities.remember(user)
                }
                entries[index] = .init(
                    SignInResponse(ckWebAuthToken: await tokens.issue(for: user.recordName), user: user))
            case .success(nil):
                entries[index] = .init(
                    emailAddress: person.emailAddress, error: Self.noSuchUser(person.emailAddress, in: world))
            case .failure(let error):
                entries[index] = .init(emailAddress: person.emailAddress, error: error)
            }
        }
        return WireResponse.json(try encode(SignInBatchResponse(users: entries.compactMap { $0 })))
    }

    /// The refusal of a sign-in with `createUser: false` for an address nobody has.
    private static func noSuchUser(_ email: String, in world: StoreWorld?) -> ShareError {
        ShareError(
            .notFound,
            "no user has the email address \(email)" + (world.map { " in \($0)" } ?? "")
                + "; sign in without createUser: false to create one",
            subject: email)
    }

    /// Signs in a user: in `world` when one is named, else as an identity whose user record each world makes
    /// when the user's token first reaches it (`store(for:as:)`). The address is checked as every store
    /// checks it (`EmailAddress`).
    func signIn(email: String, name: String?, in world: StoreWorld?) async throws -> User {
        if let refusal = EmailAddress.check(email) { throw refusal }
        let user: User
        if let world {
            try await takePendingResetPoint(world)
            user = try await worlds.store(for: world).signIn(email: email, name: name)
            await identities.signedIn(user, in: world)
        } else {
            let normalized = EmailAddress.normalized(email)
            let recordName = StableName.userRecordName(email: normalized)
            let given = name?.isEmpty == false ? name : nil
            let known = await identities.identity(of: recordName)
            user = User(recordName: recordName, email: normalized, name: given ?? known?.name)
        }
        await identities.remember(user)
        return user
    }

    /// The user with this address in `world`, or, with no world, signed in before or in any world.
    private func existingUser(email: String, in world: StoreWorld?) async throws -> User? {
        if let refusal = EmailAddress.check(email) { throw refusal }
        if let world { return try await worlds.store(for: world).signInExisting(email: email) }
        let recordName = StableName.userRecordName(email: EmailAddress.normalized(email))
        if let known = await identities.identity(of: recordName) { return known }
        for world in try worlds.worlds() {
            if let found = try await worlds.store(for: world).signInExisting(email: email) { return found }
        }
        return nil
    }

    /// Takes a world's reset point if it is still to be taken (`FixtureState.pendingPoints`): before anything
    /// that may change the world, outside its requests (it waits for them to end).
    func takePendingResetPoint(_ world: StoreWorld) async throws {
        guard await fixture.isPending(world) else { return }
        try await gate.exclusively(world) {
            guard await fixture.isPending(world) else { return }
            await fixture.setResetPoint(try await worlds.snapshot(world), for: world)
        }
    }

    /// The store of the world a request names, with its user given a user record there the first time.
    func store(for world: StoreWorld, as user: UserRecordName) async throws -> any Store {
        let store = try worlds.store(for: world)
        if let identity = await identities.needingSignIn(user, in: world) {
            let signedIn = try await store.signIn(email: identity.email ?? "", name: identity.name)
            await identities.signedIn(signedIn, in: world)
        }
        return store
    }

    // MARK: Database operations

    func perform(_ operation: WireOperation, _ request: Request, context: EmulatorRequestContext) async throws
        -> Response
    {
        var request = request
        let databaseName = context.parameters.get("database") ?? ""
        guard let database = WireSpelling.database(databaseName) else {
            throw ShareError(
                .badRequest, "unknown database \"\(databaseName)\" in the path; expected public, private or shared")
        }
        guard operation.databases.contains(database) else {
            throw ShareError(
                .badRequest,
                "\(operation) is served in the "
                    + operation.databases.map(WireSpelling.database).joined(separator: " and ")
                    + " database, not \(WireSpelling.database(database))")
        }
        let world = try Self.world(context)
        await containers.record(container: world.container, environment: WireSpelling.environment(world.environment))
        let body = try await readBody(&request)
        // Kept assets are answered with a downloadURL on this server, as the client named it, good in this
        // world for a while (`AssetDownloads`): handed out only with a record this caller may read.
        let downloads = self.downloads
        let serving = WireAsset.Serving(
            downloadBase: baseURL(of: request), checksum: servedChecksum,
            grant: { kept in downloads.grant(kept, in: world) })
        let user = try context.user()
        try await takePendingResetPoint(world)
        let answer = try await gate.request(world) {
            let store = try await self.store(for: world, as: user)
            // Every zone ID answered names its real owner: the caller's own zones are theirs (the shared
            // database's already name their owner), in the public database too, as Apple's service answers a
            // signed-in user; a caller who is no user (no web auth token, a server key) keeps the placeholder.
            let isNoUser = user == AccessRules.unauthenticatedCaller || AccessRules.isServerKeyCaller(user)
            let owner = isNoUser ? defaultOwnerName : user
            return try await WireAsset.$serving.withValue(serving) {
                try await WireZoneID.$answeringFor.withValue(owner) {
                    try await dispatch(
                        operation,
                        OperationCall(store: store, world: world, database: database, body: body, user: user))
                }
            }
        }
        return WireResponse.json(answer)
    }

    /// The container and environment a request's path names.
    static func world(_ context: EmulatorRequestContext) throws -> StoreWorld {
        let environmentName = context.parameters.get("environment") ?? ""
        guard let environment = WireSpelling.environment(environmentName) else {
            throw ShareError(
                .badRequest,
                "unknown environment \"\(environmentName)\" in the path; expected development or production")
        }
        let container = context.parameters.get("container") ?? ""
        if let problem = StoreWorld.containerProblem(container) {
            throw ShareError(.badRequest, problem + " (in the path)", subject: container)
        }
        return StoreWorld(container: container, environment: environment)
    }

    /// An unknown path under `/database/`.
    func unknownOperation(_ request: Request) throws -> Response {
        throw ShareError(
            .badRequest,
            "unknown operation \(request.uri.path); the emulator serves "
                + WireOperation.all.map(\.path).joined(separator: ", "))
    }

    /// What one database operation is answered with: the store acting in the request's world, the
    /// database the path names, the request's body and its user.
    struct OperationCall {
        let store: any Store
        let world: StoreWorld
        let database: DatabaseScope
        let body: Data
        let user: UserRecordName
    }

    /// Answers one operation with `store` acting in the request's environment: the route of each operation
    /// to the method that answers it.
    private func dispatch(_ operation: WireOperation, _ call: OperationCall) async throws -> ByteBuffer {
        let (store, database, body, user) = (call.store, call.database, call.body, call.user)
        // By name, so that an operation added to `WireOperation` is a compile error here until it is answered.
        switch operation.name {
        case .recordsModify: return try await modifyRecords(call)
        case .recordsLookup: return try await lookupRecords(call)
        case .recordsQuery:
            return try await query(
                try decode(QueryRecordsRequest.self, from: body), store: store, database: database, as: user)
        case .recordsChanges:
            return try encode(
                try await recordChanges(
                    try decode(RecordChangesRequest.self, from: body), store: store, database: database, as: user))
        case .recordsResolve, .recordsAccept:
            return try await shareResults(
                operation, body: body, store: store, container: call.world.container, as: user)
        case .zonesChanges: return try await zonesChanges(call)
        case .zonesList: return try await listZones(call)
        case .zonesLookup: return try await lookupZones(call)
        case .zonesModify: return try await modifyZones(call)
        case .changesDatabase: return try await databaseChanges(call)
        case .changesZone:
            let request = try decode(ZoneChangesRequest.self, from: body)
            try checkLimit(request.zones.count, "zones")
            return try encode(try await zoneChanges(request, store: store, database: database, as: user))
        case .usersCurrent: return try await currentUser(call)
        case .usersLookupEmail: return try await lookupEmails(body, store: store, as: user)
        case .usersLookupContacts: return try lookupContacts(call)
        case .usersCaller, .usersDiscover, .usersLookupPhone, .usersLookupID, .usersSettings:
            return try await users(operation, store: store, body: body, as: user)
        case .schemaLookup, .schemaExtend, .schemaDeploy: return try await schema(operation, call)
        case .subscriptionsList, .subscriptionsLookup, .subscriptionsModify:
            return try await subscriptions(operation, store: store, database: database, body: body, as: user)
        case .assetsRereference:
            return try await assetsRereference(body: body, store: store, database: database, as: user)
        case .assetsUpload: return try await assetsUpload(body: body, world: call.world)
        case .tokensCreate, .tokensRegister:
            // Routed to `tokens` on the database and device paths (CloudKitEmulator+Notifications), never here.
            throw ShareError(.badRequest, "unknown operation \(operation)")
        }
    }

    // MARK: HTTP

    func checkLimit(_ count: Int, _ what: String) throws {
        try CloudKitLimits.checkOperationCount(count, of: what)
    }

    private func readBody(_ request: inout Request) async throws -> Data {
        do {
            let buffer = try await request.collectBody(upTo: configuration.maxBodyBytes)
            return Data(buffer.readableBytesView)
        } catch {
            throw configuration.bodyTooLarge
        }
    }

    func decode<T: Decodable>(_ type: T.Type, from body: Data) throws -> T {
        guard !body.isEmpty else {
            throw ShareError(.badRequest, "this request needs a JSON body")
        }
        do {
            return try WireCoding.decode(T.self, from: body)
        } catch let error as DecodingError {
            throw ShareError(.badRequest, "malformed request body: \(Self.describe(error))")
        } catch {
            throw ShareError(.badRequest, "malformed request body: not JSON")
        }
    }

    func encode<T: Encodable>(_ value: T) throws -> ByteBuffer {
        ByteBuffer(bytes: try WireCoding.body(value))
    }

    /// Answers of records, the emulator's busiest, written without `JSONEncoder` (`WireRecordWriter`), as bytes
    /// copied once into the server's buffer.
    func encode(_ answer: RecordsAnswer) throws -> ByteBuffer {
        try WireRecordWriter.encode(answer).withBytes { ByteBuffer(bytes: $0) }
    }

    /// An answer written as the store read it.
    func encode(_ answer: RecordsAnswerWriter, continuationMarker: String?) throws -> ByteBuffer {
        try answer.finish(continuationMarker: continuationMarker).withBytes { ByteBuffer(bytes: $0) }
    }

    private func encode(_ answer: ZoneChangesAnswer) throws -> ByteBuffer {
        try WireRecordWriter.encode(answer).withBytes { ByteBuffer(bytes: $0) }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "" : " at \(keys.hasPrefix(".") ? String(keys.dropFirst()) : keys)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\"\(path(context))"
        case .typeMismatch(_, let context): return "\(context.debugDescription)\(path(context))"
        case .valueNotFound(_, let context): return "missing value\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

/// A request body with nothing to read: decoding it checks only that it is JSON.
struct NoMembers: Decodable {}
