import Foundation
import ShareKit

/// Forwards every call to a real store, counting calls and the size of each `modifyRecords` batch: the
/// planner's promise of few store calls is measured on the real store, not on a stand-in.
final class CountingStore: Store, @unchecked Sendable {
    let base: any Store
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var batches: [[RecordOperation]] = []

    init(_ base: any Store) { self.base = base }

    private var hooks: [String: @Sendable () async throws -> Void] = [:]

    private func count(_ name: String) {
        lock.lock()
        counts[name, default: 0] += 1
        lock.unlock()
    }

    /// Runs `action` once, just before the next call named `name` reaches the store: a write behind the
    /// caller's back at a chosen moment.
    func before(_ name: String, _ action: @escaping @Sendable () async throws -> Void) {
        lock.withLock { hooks[name] = action }
    }

    /// Counts a call and runs the action waiting for it, if any.
    private func call(_ name: String) async throws {
        count(name)
        let hook = lock.withLock { hooks.removeValue(forKey: name) }
        try await hook?()
    }

    private func record(_ operations: [RecordOperation]) {
        lock.withLock { batches.append(operations) }
    }

    /// Calls by method name.
    var calls: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }

    var totalCalls: Int { calls.values.reduce(0, +) }

    /// Every `modifyRecords` batch, in order.
    var modifyBatches: [[RecordOperation]] {
        lock.lock()
        defer { lock.unlock() }
        return batches
    }

    func resetCounts() {
        lock.lock()
        counts = [:]
        batches = []
        lock.unlock()
    }

    var displayName: String { base.displayName }
    var capabilities: StoreCapabilities { base.capabilities }
    var environment: CloudKitEnvironment { base.environment }
    func inEnvironment(_ environment: CloudKitEnvironment) throws -> any Store { try base.inEnvironment(environment) }
    func schema(in environment: CloudKitEnvironment, as user: UserRecordName) async throws -> Schema {
        count("schema")
        return try await base.schema(in: environment, as: user)
    }
    func extendSchema(_ schema: Schema, as user: UserRecordName) async throws -> [SchemaChange] {
        count("extendSchema")
        return try await base.extendSchema(schema, as: user)
    }
    func deploySchema(as user: UserRecordName) async throws -> [SchemaChange] {
        count("deploySchema")
        return try await base.deploySchema(as: user)
    }

    func signIn(email: String, name: String?) async throws -> User {
        count("signIn")
        return try await base.signIn(email: email, name: name)
    }
    func signInExisting(email: String) async throws -> User? {
        count("signInExisting")
        return try await base.signInExisting(email: email)
    }
    func signIn(_ users: [UserSignIn]) async throws -> [Result<User, ShareError>] {
        count("signIn(users)")
        return try await base.signIn(users)
    }
    func signInExisting(_ emails: [String]) async throws -> [Result<User?, ShareError>] {
        count("signInExisting(emails)")
        return try await base.signInExisting(emails)
    }
    func canActAs(email: String) async -> Bool { await base.canActAs(email: email) }
    func finishedWriting() { base.finishedWriting() }
    func setDiscoverability(_ settings: UserDiscoverability, as user: UserRecordName) async throws {
        count("setDiscoverability")
        try await base.setDiscoverability(settings, as: user)
    }
    func discoverability(as user: UserRecordName) async throws -> UserDiscoverability {
        count("discoverability")
        return try await base.discoverability(as: user)
    }
    func discoverUsers(_ lookups: [UserLookup], as user: UserRecordName) async throws -> [UserIdentity] {
        count("discoverUsers")
        return try await base.discoverUsers(lookups, as: user)
    }
    func currentUser(as user: UserRecordName) async throws -> User {
        count("currentUser")
        return try await base.currentUser(as: user)
    }
    func lookupUsers(emails: [String], as user: UserRecordName) async throws -> [User?] {
        count("lookupUsers")
        return try await base.lookupUsers(emails: emails, as: user)
    }
    func listZones(in database: DatabaseScope, as user: UserRecordName) async throws -> [Zone] {
        count("listZones")
        return try await base.listZones(in: database, as: user)
    }
    func lookupZones(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    {
        count("lookupZones")
        return try await base.lookupZones(zoneIDs, in: database, as: user)
    }
    func modifyZones(_ operations: [ZoneOperation], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Result<Zone, ShareError>]
    {
        count("modifyZones")
        return try await base.modifyZones(operations, in: database, as: user)
    }
    func lookupRecords(_ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName)
        async throws -> [RecordOutcome]
    {
        count("lookupRecords")
        return try await base.lookupRecords(recordNames, in: zoneID, database: database, as: user)
    }
    func queryRecords(_ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName)
        async throws -> QueryPage
    {
        count("queryRecords")
        return try await base.queryRecords(query, in: zoneID, database: database, as: user)
    }
    func modifyRecords(_ write: ZoneWrite, as user: UserRecordName) async throws -> [RecordOutcome] {
        count("modifyRecords")
        record(write.operations)
        return try await base.modifyRecords(write, as: user)
    }
    func resolveShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        count("resolveShare")
        return try await base.resolveShare(url: url, as: user)
    }
    func acceptShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        count("acceptShare")
        return try await base.acceptShare(url: url, as: user)
    }
    func acceptShares(urls: [String], as user: UserRecordName) async throws -> [Result<ShareMetadata, ShareError>] {
        count("acceptShares")
        return try await base.acceptShares(urls: urls, as: user)
    }
    func leaveShare(recordName: String, in zoneID: ZoneID, as user: UserRecordName) async throws {
        count("leaveShare")
        try await base.leaveShare(recordName: recordName, in: zoneID, as: user)
    }
    func databaseChanges(in database: DatabaseScope, since token: ChangeToken?, as user: UserRecordName) async throws
        -> DatabaseChanges
    {
        try await call("databaseChanges")
        return try await base.databaseChanges(in: database, since: token, as: user)
    }
    func zoneTags(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [ZoneTags?]
    {
        try await call("zoneTags")
        return try await base.zoneTags(zoneIDs, in: database, as: user)
    }
    func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName
    ) async throws -> ZoneChanges {
        count("zoneChanges")
        return try await base.zoneChanges(zoneID, in: database, since: token, resultsLimit: resultsLimit, as: user)
    }
    func reset() async throws {
        count("reset")
        try await base.reset()
    }
    func listSubscriptions(in database: DatabaseScope, as user: UserRecordName) async throws -> [Subscription] {
        count("listSubscriptions")
        return try await base.listSubscriptions(in: database, as: user)
    }
    func lookupSubscriptions(_ subscriptionIDs: [String], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [SubscriptionOutcome]
    {
        count("lookupSubscriptions")
        return try await base.lookupSubscriptions(subscriptionIDs, in: database, as: user)
    }
    func modifySubscriptions(
        _ operations: [SubscriptionOperation], in database: DatabaseScope, as user: UserRecordName
    ) async throws -> [SubscriptionOutcome] {
        count("modifySubscriptions")
        return try await base.modifySubscriptions(operations, in: database, as: user)
    }
}
