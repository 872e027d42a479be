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
                throw ShareError(
                    .notFound,
                    "no user has the email address \(signIn.emailAddress)"
                        + (world.map { " in \($0)" } ?? "") + "; sign in without createUser: false to create one",
                    subject: signIn.emailAddress)
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

    /// Signs in a user: in `world` when one is named, else as an identity whose user record each world makes
    /// when the user's token first reaches it (`store(for:as:)`). The address is checked as every store
    /// checks it (`EmailAddress`).
    func signIn(email: String, name: String?, in world: StoreWorld?) async throws -> User {
        if let refusal = EmailAddress.check(email) { throw refusal }
        let user: User
        if let world {
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
        // Kept assets are answered with a downloadURL on this server, as the client named it.
        let serving = WireAsset.Serving(downloadBase: baseURL(of: request), checksum: servedChecksum)
        let user = try context.user()
        let answer = try await gate.request(world) {
            let store = try await self.store(for: world, as: user)
            return try await WireAsset.$serving.withValue(serving) {
                try await dispatch(operation, store: store, world: world, database: database, body: body, as: user)
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

    /// Answers one operation with `store` acting in the request's environment.
    private func dispatch(
        _ operation: WireOperation, store: any Store, world: StoreWorld, database: DatabaseScope, body: Data,
        as user: UserRecordName
    ) async throws -> ByteBuffer {
        switch operation {
        case .recordsModify:
            let request = try decode(ModifyRecordsRequest.self, from: body)
            try checkLimit(request.operations.count, "operations")
            let zoneID = request.zoneID?.zoneID ?? .defaultZone
            let operations = try await keepingAssets(
                try await recordOperations(request.operations, in: zoneID, store: store, as: user), store: store)
            let atomic = request.atomic ?? (database != .public && zoneID.zoneName != defaultZoneName)
            let outcomes = Self.conflictForExistingCreates(
                operations,
                try await Self.forceDeletingAsLive(operations, database: database, atomic: atomic) { sent in
                    try await modify(sent, store: store, in: zoneID, database: database, atomic: atomic, as: user)
                })
            for case .failed(let name, let error) in outcomes where error.code != .atomicError {
                RequestNotes.refused(error, subject: "\(zoneID.zoneName)/\(name)")
            }
            return try encode(
                RecordsAnswer(
                    outcomes, currentUser: user, desiredKeys: request.desiredKeys,
                    numbersAsStrings: request.numbersAsStrings))
        case .recordsLookup:
            let request = try decode(LookupRecordsRequest.self, from: body)
            try checkLimit(request.records.count, "records")
            let zoneID = request.zoneID?.zoneID ?? .defaultZone
            // Written as the store reads them.
            let answer = RecordsAnswerWriter(
                currentUser: user, desiredKeys: request.desiredKeys, numbersAsStrings: request.numbersAsStrings,
                capacity: request.records.count * 400)
            try await store.lookupRecords(
                request.records.map(\.recordName), in: zoneID, database: database, as: user, into: answer)
            return try encode(answer, continuationMarker: nil)
        case .recordsQuery:
            return try await query(
                try decode(QueryRecordsRequest.self, from: body), store: store, database: database, as: user)
        case .recordsChanges:
            return try encode(
                try await recordChanges(
                    try decode(RecordChangesRequest.self, from: body), store: store, database: database, as: user))
        case .zonesChanges:
            let request =
                body.isEmpty
                ? ZonesChangesRequest(metaSyncToken: nil) : try decode(ZonesChangesRequest.self, from: body)
            let changes = try await store.databaseChanges(
                in: database, since: request.metaSyncToken.map { ChangeToken(rawValue: OpaqueText.read($0)) }, as: user)
            var answer = ZonesChangesResponse(changes)
            answer.metaSyncToken = OpaqueText.written(answer.metaSyncToken)
            return try encode(answer)
        case .zonesList:
            let zones = try await store.listZones(in: database, as: user)
            return try encode(
                ZonesResponse(
                    zones: await zoneDictionaries(zones.map(WireZone.init), store: store, database: database, as: user))
            )
        case .zonesLookup:
            let request = try decode(LookupZonesRequest.self, from: body)
            try checkLimit(request.zones.count, "zones")
            let zoneIDs = request.zones.map(\.zoneID)
            let results = try await store.lookupZones(zoneIDs, in: database, as: user)
            return try encode(
                ZonesResponse(
                    zones: await zoneDictionaries(
                        zip(zoneIDs, results).map(wire), store: store, database: database, as: user)))
        case .zonesModify:
            let request = try decode(ModifyZonesRequest.self, from: body)
            try checkLimit(request.operations.count, "operations")
            let operations = try request.operations.map { operation in
                guard let kind = WireSpelling.zoneOperationKind(operation.operationType) else {
                    throw ShareError(
                        .badRequest,
                        "unknown zone operationType \"\(operation.operationType)\"; expected create or delete")
                }
                return ZoneOperation(kind, operation.zone.zoneID.zoneID)
            }
            let results = try await store.modifyZones(operations, in: database, as: user)
            return try encode(
                ZonesResponse(
                    zones: await zoneDictionaries(
                        zip(operations.map(\.zoneID), results).map(wire), store: store, database: database, as: user)))
        case .changesDatabase:
            let request =
                body.isEmpty
                ? DatabaseChangesRequest(syncToken: nil) : try decode(DatabaseChangesRequest.self, from: body)
            let changes = try await store.databaseChanges(
                in: database, since: request.syncToken.map { ChangeToken(rawValue: OpaqueText.read($0)) }, as: user)
            var answer = DatabaseChangesResponse(changes)
            answer.syncToken = OpaqueText.written(answer.syncToken)
            return try encode(answer)
        case .changesZone:
            let request = try decode(ZoneChangesRequest.self, from: body)
            try checkLimit(request.zones.count, "zones")
            return try encode(try await zoneChanges(request, store: store, database: database, as: user))
        case .usersCurrent:
            // A server-to-server key acts as a user of its own, whom no store holds: its record name alone.
            if AccessRules.isServerKeyCaller(user) { return try encode(WireUser(User(recordName: user))) }
            return try encode(WireUser(try await store.currentUser(as: user)))
        case .usersLookupEmail:
            return try await lookupEmails(body, store: store, as: user)
        case .usersLookupContacts:
            // The caller's address book's discoverable users: the emulator keeps no address books.
            if !body.isEmpty { _ = try decode(NoMembers.self, from: body) }
            return try encode(UsersResponse(users: []))
        case .recordsResolve, .recordsAccept:
            return try await shareResults(operation, body: body, store: store, container: world.container, as: user)
        case .assetsRereference:
            return try await assetsRereference(body: body, store: store, database: database, as: user)
        case .schemaLookup:
            return try encode(SchemaResponse(schema: try await store.schema(in: store.environment, as: user)))
        case .schemaExtend:
            let request = try decode(SchemaResponse.self, from: body)
            guard store.environment == .development else {
                throw ShareError(
                    .badRequest,
                    "the production schema changes only by deploying development's (schema/deploy), as in the "
                        + "CloudKit Console")
            }
            return try encode(SchemaChangesResponse(changes: try await store.extendSchema(request.schema, as: user)))
        case .schemaDeploy:
            if !body.isEmpty { _ = try decode(NoMembers.self, from: body) }
            return try encode(SchemaChangesResponse(changes: try await store.deploySchema(as: user)))
        case .usersCaller, .usersDiscover, .usersLookupPhone, .usersLookupID, .usersSettings:
            return try await users(operation, store: store, body: body, as: user)
        case .subscriptionsList, .subscriptionsLookup, .subscriptionsModify:
            return try await subscriptions(operation, store: store, database: database, body: body, as: user)
        case .assetsUpload:
            return try await assetsUpload(body: body, world: world)
        default:
            throw ShareError(.badRequest, "unknown operation \(operation)")
        }
    }

    /// Applies record operations. In the shared database a participant that deletes a share leaves it, as
    /// in CloudKit; those deletes go to `leaveShare`, the rest to `modifyRecords`, and the outcomes keep the
    /// request's order.
    private func modify(
        _ operations: [RecordOperation], store: any Store, in zoneID: ZoneID, database: DatabaseScope, atomic: Bool,
        as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        let operations = try await namingShares(operations, store: store, in: zoneID, database: database, as: user)
        func isLeave(_ operation: RecordOperation) -> Bool {
            guard database == .shared, operation.kind.isDelete, case .share = operation.item else { return false }
            return true
        }
        guard operations.contains(where: isLeave) else {
            return try await store.modifyRecords(operations, in: zoneID, database: database, atomic: atomic, as: user)
        }
        let others = operations.filter { !isLeave($0) }
        var otherOutcomes =
            others.isEmpty
            ? []
            : try await store.modifyRecords(others, in: zoneID, database: database, atomic: atomic, as: user)
        var outcomes: [RecordOutcome] = []
        for operation in operations {
            if isLeave(operation) {
                do {
                    try await store.leaveShare(recordName: operation.recordName, in: zoneID, as: user)
                    outcomes.append(.deleted(recordName: operation.recordName))
                } catch let error as ShareError {
                    outcomes.append(.failed(recordName: operation.recordName, error))
                }
            } else {
                outcomes.append(otherOutcomes.removeFirst())
            }
        }
        return outcomes
    }

    /// In the shared database, a delete that names a record by its name alone (CloudKit JS's `deleteRecords`
    /// sends no type) may name a share, which the participant then leaves: such names are looked up, as the
    /// caller, and a share's becomes a share operation.
    private func namingShares(
        _ operations: [RecordOperation], store: any Store, in zoneID: ZoneID, database: DatabaseScope,
        as user: UserRecordName
    ) async throws -> [RecordOperation] {
        guard database == .shared else { return operations }
        let untyped = operations.indices.filter { index in
            guard operations[index].kind.isDelete, case .record(let record) = operations[index].item else {
                return false
            }
            return record.recordType.isEmpty
        }
        guard !untyped.isEmpty else { return operations }
        let found = try await store.lookupRecords(
            untyped.map { operations[$0].recordName }, in: zoneID, database: database, as: user)
        var result = operations
        for (index, outcome) in zip(untyped, found) {
            guard case .savedShare(var share) = outcome, case .record(let record) = operations[index].item else {
                continue
            }
            share.changeTag = record.changeTag
            result[index] = RecordOperation(operations[index].kind, share: share)
        }
        return result
    }

    // MARK: Conversions

    /// The request's operations as the store takes them. Values sent without a `type` (as CloudKit JS sends
    /// them) take their field's type in the schema (`SchemaRules.settling`): the schema as it is, grown by the
    /// request's earlier operations, so that a field one operation creates settles the values after it. The
    /// schema is read only for a request that has such a value; sharelane's own client always sends `type`.
    private func recordOperations(
        _ wireOperations: [ModifyRecordsRequest.Operation], in zoneID: ZoneID, store: any Store,
        as user: UserRecordName
    ) async throws -> [RecordOperation] {
        var operations = try wireOperations.map { try recordOperation($0, in: zoneID) }
        let untyped = wireOperations.map(\.record.untypedFieldNames)
        guard untyped.contains(where: { !$0.isEmpty }) else { return operations }
        var schema = try await store.schema(in: store.environment, as: user)
        for index in operations.indices {
            guard case .record(var record) = operations[index].item else { continue }
            if !untyped[index].isEmpty {
                record.fields = SchemaRules.settling(
                    record.fields, untyped: untyped[index], recordType: record.recordType, in: schema)
                operations[index].item = .record(record)
            }
            // A refusal here is the store's to answer, in its place in the batch.
            _ = try? SchemaRules.admit(
                recordType: record.recordType, fields: record.fields, into: &schema, environment: store.environment)
        }
        return operations
    }

    private func recordOperation(_ operation: ModifyRecordsRequest.Operation, in zoneID: ZoneID) throws
        -> RecordOperation
    {
        guard let kind = WireSpelling.operationKind(operation.operationType) else {
            throw ShareError(
                .badRequest,
                "unknown operationType \"\(operation.operationType)\"; expected one of "
                    + OperationKind.allCases.map(WireSpelling.operationType).joined(separator: ", "))
        }
        var record = operation.record
        if record.isShare || record.recordName == zoneShareRecordName {
            // A new share without a name is named by the store (zone-wide shares are cloudkit.zoneshare).
            record.recordType = shareRecordType
            return RecordOperation(kind, share: try record.shareValue(in: zoneID))
        }
        if record.recordName == nil {
            guard kind == .create || kind == .forceUpdate || kind == .forceReplace else {
                throw ShareError(.badRequest, "a \(WireSpelling.operationType(kind)) operation needs record.recordName")
            }
            record.recordName = UUID().uuidString.lowercased()
        }
        if record.recordType == nil, !kind.isDelete {
            throw ShareError(
                .badRequest, "a \(WireSpelling.operationType(kind)) operation needs record.recordType",
                subject: record.recordName)
        }
        return RecordOperation(kind, record.record(in: zoneID))
    }

    private func wire(_ zoneID: ZoneID, _ result: Result<Zone, ShareError>) -> WireZone {
        switch result {
        case .success(let zone): WireZone(zone)
        case .failure(let error): WireZone(zoneID: zoneID, error: error)
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
            throw ShareError(
                .badRequest, "the request body is larger than \(configuration.maxBodyBytes) bytes, or was cut short")
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

    private func encode(_ response: ZoneChangesResponse) throws -> ByteBuffer {
        try WireRecordWriter.encode(response).withBytes { ByteBuffer(bytes: $0) }
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
private struct NoMembers: Decodable {}
