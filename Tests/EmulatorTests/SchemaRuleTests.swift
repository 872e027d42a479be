import CloudKitWire
import Foundation
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// CloudKit's schema rules on every store: a SQLite file, `memory:`, and `sharelane serve` over HTTP answer
/// alike (the HTTP answers carry the same `serverErrorCode` and reason).
@Suite(.serialized) struct SchemaRuleTests {
    enum Kind: String, CaseIterable, Sendable { case sqlite, memory, http }

    /// Runs `body` on a fresh store of the kind, in development, as alice.
    static func onStore(
        _ kind: Kind, _ body: @Sendable (any Store, UserRecordName) async throws -> Void
    ) async throws {
        switch kind {
        case .sqlite:
            try await TemporaryDirectory.with("schema") { dir in
                let store = try SQLiteStore(path: dir.file("store.sqlite"), logger: EmulatorHarness.quiet)
                try await body(store, try await store.signIn(email: "alice@example.com", name: nil).recordName)
            }
        case .memory:
            let store = try SQLiteStore.inMemory(logger: EmulatorHarness.quiet)
            try await body(store, try await store.signIn(email: "alice@example.com", name: nil).recordName)
        case .http:
            try await EmulatorHarness.withEmulator { base in
                let store = EmulatorHarness.store(base)
                try await body(store, try await store.signIn(email: "alice@example.com", name: nil).recordName)
            }
        }
    }

    static let trips = ZoneID(zoneName: "Trips")

    static func save(
        _ store: any Store, _ name: String, _ type: String, _ fields: [String: FieldValue], as user: UserRecordName,
        _ kind: OperationKind = .forceUpdate
    ) async throws -> RecordOutcome {
        let outcomes = try await store.modifyRecords(
            [RecordOperation(kind, Record(recordName: name, recordType: type, zoneID: trips, fields: fields))],
            in: trips, database: .private, atomic: false, as: user)
        return try #require(outcomes.first)
    }

    static func makeZone(_ store: any Store, as user: UserRecordName) async throws {
        _ = try await store.modifyZones([ZoneOperation(.create, trips)], in: .private, as: user)
    }

    @Test(
        "a field's type is fixed by its first save; another type is refused with Apple's error and changes nothing",
        arguments: Kind.allCases)
    func aFieldsTypeIsFixed(kind: Kind) async throws {
        try await Self.onStore(kind) { store, alice in
            try await Self.makeZone(store, as: alice)
            let saved = try await Self.save(store, "hotel", "Cost", ["amount": .double(420.5)], as: alice)
            #expect(saved.error == nil)
            let refused = try await Self.save(store, "hotel", "Cost", ["amount": .int64(500)], as: alice)
            #expect(refused.error?.code == .badRequest)
            #expect(
                refused.error?.reason.hasPrefix(
                    "invalid attempt to set value type INT64 for field 'amount' for type 'Cost', defined to be: DOUBLE")
                    == true, "\(String(describing: refused.error))")
            // A new record of the type is held to it too.
            let other = try await Self.save(store, "flight", "Cost", ["amount": .string("cheap")], as: alice)
            #expect(other.error?.code == .badRequest)
            let live = try await store.lookupRecords(
                ["hotel", "flight"], in: Self.trips, database: .private, as: alice)
            if case .saved(let hotel) = live[0] {
                #expect(hotel.fields["amount"] == .double(420.5))
            } else {
                Issue.record("hotel is gone: \(live[0])")
            }
            #expect(live[1].error?.code == .notFound)
            let schema = try await store.schema(in: .development, as: alice)
            #expect(schema.field("amount", of: "Cost")?.type == .double)
            #expect(schema.field("amount", of: "Cost")?.indexes == [.queryable, .sortable])
        }
    }

    @Test(
        "development creates types and fields with default indexes; production holds only what was deployed",
        arguments: Kind.allCases)
    func productionHoldsOnlyWhatWasDeployed(kind: Kind) async throws {
        try await Self.onStore(kind) { store, alice in
            try await Self.makeZone(store, as: alice)
            // Production is a world of its own: alice's zone there is another zone.
            let production = try store.inEnvironment(.production)
            _ = try await production.signIn(email: "alice@example.com", name: nil)
            try await Self.makeZone(production, as: alice)
            #expect(production.environment == .production)
            let early = try await Self.save(production, "hotel", "Cost", ["amount": .double(1)], as: alice)
            #expect(early.error?.code == .badRequest)
            #expect(early.error?.reason.hasPrefix("Cannot create new type Cost in production schema") == true)

            _ = try await Self.save(
                store, "hotel", "Cost", ["amount": .double(420.5), "note": .string("x")], as: alice)
            #expect(try await store.schema(in: .production, as: alice).isEmpty)
            let deployed = try await store.deploySchema(as: alice)
            #expect(deployed.map(\.description).contains("+ field Cost.note STRING QUERYABLE SORTABLE SEARCHABLE"))
            #expect(try await store.deploySchema(as: alice).isEmpty)

            let allowed = try await Self.save(production, "hotel", "Cost", ["amount": .double(500)], as: alice)
            #expect(allowed.error == nil)
            let vat = try await Self.save(production, "hotel", "Cost", ["vat": .double(0.2)], as: alice)
            #expect(vat.error?.code == .badRequest)
            #expect(
                vat.error?.reason.hasPrefix("Cannot create or modify field 'vat' in record 'Cost' in production schema")
                    == true)
            #expect(try await store.schema(in: .production, as: alice).field("vat", of: "Cost") == nil)
            #expect(try await store.schema(in: .development, as: alice).field("vat", of: "Cost") == nil)
        }
    }

    @Test("sharing in production needs the cloudkit.share type deployed", arguments: Kind.allCases)
    func sharingInProductionNeedsTheShareType(kind: Kind) async throws {
        try await Self.onStore(kind) { store, alice in
            try await Self.makeZone(store, as: alice)
            // Production is a world of its own: alice's zone there is another zone.
            let production = try store.inEnvironment(.production)
            _ = try await production.signIn(email: "alice@example.com", name: nil)
            try await Self.makeZone(production, as: alice)
            let refused = try await production.modifyRecords(
                [RecordOperation(.create, share: .zoneWide(Self.trips, title: "Trips"))], in: Self.trips,
                database: .private, atomic: false, as: alice)
            #expect(
                refused.first?.error?.reason.hasPrefix("Cannot create new type cloudkit.share in production") == true)
            let shared = try await store.modifyRecords(
                [RecordOperation(.create, share: .zoneWide(Self.trips, title: "Trips"))], in: Self.trips,
                database: .private, atomic: false, as: alice)
            #expect(shared.first?.error == nil)
            #expect(try await store.schema(in: .development, as: alice).recordTypes["cloudkit.share"] != nil)
        }
    }

    @Test(
        "a query needs QUERYABLE to filter and SORTABLE to sort or compare; encrypted fields cannot be queried",
        arguments: Kind.allCases)
    func queriesNeedIndexes(kind: Kind) async throws {
        try await Self.onStore(kind) { store, alice in
            try await Self.makeZone(store, as: alice)
            _ = try await Self.save(store, "a", "Fast", ["goal": .string("16h"), "blob": .bytes(Data([1]))], as: alice)
            func query(_ filters: [QueryFilter], sort: [QuerySort] = [], on s: (any Store)? = nil) async throws
                -> QueryPage
            {
                try await (s ?? store).queryRecords(
                    RecordQuery(recordType: "Fast", filters: filters, sort: sort), in: Self.trips,
                    database: .private, as: alice)
            }
            #expect(try await query([QueryFilter("goal", .equals, .string("16h"))]).records.count == 1)
            await #expect(throws: ShareError.self) {
                try await query([QueryFilter("blob", .equals, .bytes(Data([1])))])
            }
            do {
                _ = try await query([QueryFilter("___recordID", .equals, .string("a"))])
                Issue.record("a query by record name without ___recordID QUERYABLE ran")
            } catch let error as ShareError {
                #expect(error.code == .badRequest)
                #expect(error.reason.hasPrefix("Field '___recordID' is not marked queryable"))
            }
            do {
                _ = try await query([], sort: [QuerySort("___createTime")])
                Issue.record("a sort on ___createTime without SORTABLE ran")
            } catch let error as ShareError {
                #expect(error.reason.hasPrefix("Field '___createTime' is not marked sortable"))
            }
            let added = try await store.extendSchema(
                Schema(recordTypes: [
                    RecordTypeSchema(
                        "Fast",
                        fields: [
                            SchemaField("___recordID", .reference, indexes: .queryable),
                            SchemaField("note", .string, isEncrypted: true),
                        ])
                ]), as: alice)
            #expect(
                added.map(\.description) == [
                    "~ field Fast.___recordID indexes none → QUERYABLE", "+ field Fast.note ENCRYPTED STRING",
                ])
            #expect(try await query([QueryFilter("___recordID", .equals, .string("a"))]).records.count == 1)
            do {
                _ = try await query([QueryFilter("note", .equals, .string("x"))])
                Issue.record("a query on an encrypted field ran")
            } catch let error as ShareError {
                #expect(
                    error.reason.hasPrefix("Field 'note' has a value type of ENCRYPTED_STRING and cannot be queried"))
            }
            // Production is a world of its own: its schema has none of it until deployed, and it never holds
            // development's records.
            let production = try store.inEnvironment(.production)
            _ = try await production.signIn(email: "alice@example.com", name: nil)
            try await Self.makeZone(production, as: alice)
            await #expect(throws: ShareError.self) {
                try await query([QueryFilter("goal", .equals, .string("16h"))], on: production)
            }
            _ = try await store.deploySchema(as: alice)
            #expect(
                try await query([QueryFilter("___recordID", .equals, .string("a"))], on: production).records.isEmpty)
            _ = try await Self.save(production, "b", "Fast", ["goal": .string("18h")], as: alice)
            let found = try await query([QueryFilter("goal", .equals, .string("18h"))], on: production).records
            #expect(found.map(\.recordName) == ["b"])
        }
    }

    @Test(
        "extending the schema with another type for a live field is refused and changes nothing",
        arguments: Kind.allCases)
    func extendingWithAnotherTypeIsRefused(kind: Kind) async throws {
        try await Self.onStore(kind) { store, alice in
            try await Self.makeZone(store, as: alice)
            _ = try await Self.save(store, "hotel", "Cost", ["amount": .double(1)], as: alice)
            let before = try await store.schema(in: .development, as: alice)
            do {
                _ = try await store.extendSchema(
                    Schema(recordTypes: [
                        RecordTypeSchema("Cost", fields: [SchemaField("amount", .int64), SchemaField("vat", .double)])
                    ]), as: alice)
                Issue.record("a retyping extension was accepted")
            } catch let error as ShareError {
                #expect(error.code == .badRequest)
                #expect(error.reason.contains("defined to be: DOUBLE"))
            }
            #expect(try await store.schema(in: .development, as: alice) == before)
        }
    }
}

@Suite struct SchemaDeploymentRuleTests {
    @Test("deploying refuses to remove a type or field or change a type, and lists each")
    func deployingIsAdditiveOnly() throws {
        let production = Schema(recordTypes: [
            RecordTypeSchema("Cost", fields: [SchemaField("amount", .double), SchemaField("vat", .double)]),
            RecordTypeSchema("Old"),
        ])
        let development = Schema(recordTypes: [
            RecordTypeSchema("Cost", fields: [SchemaField("amount", .int64), SchemaField("note", .string)])
        ])
        do {
            _ = try SchemaRules.deployment(development: development, production: production)
            Issue.record("a non-additive deployment was accepted")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.reason.contains("~ field Cost.amount DOUBLE → INT64"))
            #expect(error.reason.contains("- field Cost.vat DOUBLE"))
            #expect(error.reason.contains("- type Old"))
        }
        let grown = Schema(recordTypes: production.orderedTypes + [RecordTypeSchema("New")])
        let deployment = try SchemaRules.deployment(development: grown, production: production)
        #expect(deployment.changes.map(\.description) == ["+ type New"])
    }
}
