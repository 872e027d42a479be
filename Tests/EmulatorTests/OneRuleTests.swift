import Foundation
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

/// Each of CloudKit's rules lives in one place (ShareKit's `EmailAddress`, `CloudKitLimits`, `AccessRules`),
/// and every entry point answers it the same: recipe validation, the SQLite store, and `sharelane serve`
/// over the wire, with the same words.
@Suite("One owner per rule")
struct OneRuleTests {
    typealias H = EmulatorHarness

    /// The errors a recipe gets, as printed.
    static func recipeProblems(_ yaml: String) -> [String] {
        do {
            _ = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "r.yaml")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    static func recipe(users: String = "alice: { email: alice@example.com }", zones: String) -> String {
        """
        sharelane: 1
        name: rules
        owner: alice
        users:
          \(users)
        zones:
        \(zones)
        """
    }

    static func store() throws -> SQLiteStore { try SQLiteStore.inMemory() }

    /// The reason of a failed outcome, or nil when it did not fail.
    static func reason(_ outcome: RecordOutcome) -> String? { outcome.error?.reason }

    // MARK: - Email addresses

    static let badAddresses = [
        "bob", "bob@", "@example.com", "bob smith@example.com", "bob@home@example.com",
        String(repeating: "b", count: 250) + "@example.com",
    ]

    @Test("an email address is refused with the same words by a recipe, the store's sign-in and invitation, and serve")
    func emailAddresses() async throws {
        let store = try Self.store()
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let zone = ZoneID(zoneName: "Lists")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        try await H.withEmulator { base in
            for address in Self.badAddresses {
                let problem = try #require(EmailAddress.problem(address), "\(address) is taken")
                // The recipe.
                let found = Self.recipeProblems(
                    Self.recipe(users: "alice: { email: \"\(address)\" }", zones: "  Lists: {}"))
                #expect(found.contains { $0.hasSuffix("user `alice`: \(problem)") }, "\(address): \(found)")
                // The store: a sign-in, and an invitation by email.
                do {
                    _ = try await store.signIn(email: address, name: nil)
                    Issue.record("the store signed in \(address)")
                } catch let error as ShareError {
                    #expect(error.code == .badRequest)
                    #expect(error.reason == problem)
                }
                let share = Share(
                    recordName: zoneShareRecordName, zoneID: zone,
                    participants: [Participant(userRecordName: "", email: address)])
                let invited = try await store.modifyRecords(
                    [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: alice)
                #expect(Self.reason(invited[0]) == problem, "\(address)")
                // serve's sign-in.
                let body = try JSONSerialization.data(withJSONObject: ["emailAddress": address])
                let answer = try await H.raw(
                    base, "/auth/signin", query: ["ckAPIToken": H.apiToken],
                    body: String(decoding: body, as: UTF8.self))
                #expect(answer.status == 400, "\(address): \(answer.text)")
                #expect(answer.json["reason"] as? String == problem)
            }
            // Two spellings of one address are one user everywhere.
            let first = try await store.signIn(email: " Carol@Example.COM ", name: nil).recordName
            let second = try await store.signIn(email: "carol@example.com", name: nil).recordName
            #expect(first == second)
            #expect(
                Self.recipeProblems(
                    Self.recipe(
                        users: "alice: { email: alice@example.com }\n  carol: { email: Alice@Example.com }",
                        zones: "  Lists: {}")
                ).contains { $0.contains("is already used by another user") })
        }
    }

    // MARK: - Participants

    @Test("a share's participant limit and the public/private mix: one rule in a recipe, the store and serve")
    func participants() async throws {
        let countProblem = try #require(AccessRules.participantCountProblem(101))
        let mixProblem = try #require(
            AccessRules.mixingProblem(publicPermission: .readOnly, hasPrivateParticipants: true))
        // The recipe.
        let users = (1...101).map { "u\($0): { email: u\($0)@example.com }" }.joined(separator: "\n  ")
        let many = (1...101).map { "u\($0): read-only" }.joined(separator: ", ")
        var found = Self.recipeProblems(
            Self.recipe(
                users: "alice: { email: alice@example.com }\n  " + users,
                zones: "  Lists: { share: { participants: { \(many) } } }"))
        #expect(found.contains { $0.hasSuffix("error: \(countProblem)") }, "\(found)")
        found = Self.recipeProblems(
            Self.recipe(
                users: "alice: { email: alice@example.com }\n  bob: { email: bob@example.com }",
                zones: "  Lists: { share: { public_permission: read-only, participants: { bob: read-only } } }"))
        #expect(found.contains { $0.hasSuffix("error: \(mixProblem)") }, "\(found)")

        // The store, and serve over the wire.
        let tooMany = (1...101).map { Participant(userRecordName: "", email: "u\($0)@example.com") }
        let mixed = Share(
            recordName: zoneShareRecordName, zoneID: ZoneID(zoneName: "Lists"), publicPermission: .readOnly,
            participants: [Participant(userRecordName: "", email: "bob@example.com")])
        let store = try Self.store()
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let zone = ZoneID(zoneName: "Lists")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        for (share, problem) in [
            (Share(recordName: zoneShareRecordName, zoneID: zone, participants: tooMany), countProblem),
            (mixed, mixProblem),
        ] {
            let saved = try await store.modifyRecords(
                [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: alice)
            #expect(Self.reason(saved[0]) == problem)
        }
        try await H.withEmulator { base in
            let owner = try await H.signIn(base, "alice@example.com")
            _ = try await H.raw(
                base, H.databasePath("private", "zones/modify"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": owner.token],
                body: #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Lists"}}}]}"#)
            let participants = (1...101).map {
                #"{"userIdentity": {"lookupInfo": {"emailAddress": "u\#($0)@example.com"}}, "permission": "READ_ONLY"}"#
            }
            for (permission, list, problem) in [
                ("NONE", participants.joined(separator: ", "), countProblem),
                ("READ_ONLY", participants[0], mixProblem),
            ] {
                let answer = try await H.raw(
                    base, H.databasePath("private", "records/modify"),
                    query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": owner.token],
                    body: #"{"zoneID": {"zoneName": "Lists"}, "operations": [{"operationType": "create", "record": "#
                        + #"{"recordType": "cloudkit.share", "recordName": "cloudkit.zoneshare", "#
                        + #""publicPermission": "\#(permission)", "participants": [\#(list)]}}]}"#)
                let record = (answer.json["records"] as? [[String: Any]])?.first
                #expect(record?["reason"] as? String == problem, "\(answer.text.prefix(300))")
            }
        }
    }

    // MARK: - Names and sizes

    @Test("names and a record's size: a recipe, the store and serve refuse them with CloudKit's limits' words")
    func namesAndSizes() async throws {
        let zoneProblem = try #require(CloudKitLimits.zoneNameProblem("Trips/2025"))
        let recordProblem = try #require(CloudKitLimits.recordNameProblem("_secret"))
        let fieldProblem = try #require(CloudKitLimits.fieldNameProblem("due-date"))
        let typeProblem = try #require(CloudKitLimits.recordTypeProblem("To Do"))
        let big = String(repeating: "x", count: CloudKitLimits.recordBytes + 10)
        let sizeProblem = try #require(
            CloudKitLimits.recordSizeProblem(CloudKitLimits.size(of: ["note": .string(big)])))

        // The recipe.
        let found = Self.recipeProblems(
            Self.recipe(
                zones: """
                      "Trips/2025": {}
                      Lists:
                        records:
                          _secret: { type: Todo }
                          a: { type: Todo, fields: { due-date: 1 } }
                          b: { type: "To Do" }
                          c: { type: Todo, fields: { note: "\(big)" } }
                    """))
        for problem in [zoneProblem, recordProblem, fieldProblem, typeProblem, "record `c` \(sizeProblem)"] {
            #expect(found.contains { $0.contains(problem) }, "\(problem) not in \(found.map { $0.prefix(200) })")
        }

        // The store and serve: the same refusals.
        func record(_ name: String, _ type: String, _ fields: [String: FieldValue] = [:]) -> Record {
            Record(recordName: name, recordType: type, zoneID: ZoneID(zoneName: "Lists"), fields: fields)
        }
        let cases: [(Record, String)] = [
            (record("_secret", "Todo"), recordProblem), (record("a", "Todo", ["due-date": .int64(1)]), fieldProblem),
            (record("b", "To Do"), typeProblem),
            (record("c", "Todo", ["note": .string(big)]), "the record \(sizeProblem)"),
        ]
        let store = try Self.store()
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let zones = try await store.modifyZones(
            [.init(.create, ZoneID(zoneName: "Trips/2025")), .init(.create, ZoneID(zoneName: "Lists"))], in: .private,
            as: alice)
        #expect(zones.first.flatMap { try? $0.get() } == nil)
        if case .failure(let error)? = zones.first { #expect(error.reason == zoneProblem) }
        for (record, problem) in cases {
            let saved = try await store.modifyRecords(
                [.init(.create, record)], in: record.zoneID, database: .private, atomic: true, as: alice)
            #expect(Self.reason(saved[0]) == problem, "\(record.recordName)")
        }
        try await H.withEmulator { base in
            let owner = try await H.signIn(base, "alice@example.com")
            let query = ["ckAPIToken": H.apiToken, "ckWebAuthToken": owner.token]
            let made = try await H.raw(
                base, H.databasePath("private", "zones/modify"), query: query,
                body: #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Trips/2025"}}}, "#
                    + #"{"operationType": "create", "zone": {"zoneID": {"zoneName": "Lists"}}}]}"#)
            let zoneAnswers = made.json["zones"] as? [[String: Any]] ?? []
            #expect(zoneAnswers.first?["reason"] as? String == zoneProblem, "\(made.text)")
            for (record, problem) in cases {
                let fields = try record.fields.mapValues { value -> [String: Any] in
                    switch value {
                    case .string(let text): ["value": text, "type": "STRING"]
                    case .int64(let number): ["value": number, "type": "INT64"]
                    default: throw ShareError(.badRequest, "not in this test")
                    }
                }
                let operation: [String: Any] = [
                    "operationType": "create",
                    "record": ["recordName": record.recordName, "recordType": record.recordType, "fields": fields],
                ]
                let body = try JSONSerialization.data(
                    withJSONObject: ["zoneID": ["zoneName": "Lists"], "operations": [operation]])
                let answer = try await H.raw(
                    base, H.databasePath("private", "records/modify"), query: query,
                    body: String(decoding: body, as: UTF8.self))
                let refusal = (answer.json["records"] as? [[String: Any]])?.first
                #expect(refusal?["reason"] as? String == problem, "\(record.recordName): \(answer.text.prefix(300))")
            }
        }
    }

    @Test(
        "a bad record type or field name: a recipe's schema, records/modify and schema/extend refuse it in the same words"
    )
    func namesAtEveryDoor() async throws {
        let long = String(repeating: "n", count: CloudKitLimits.nameBytes + 45)
        // (record type, field, the refusal): each name breaks one rule.
        let cases: [(type: String, field: String, problem: String)] = [
            ("bad name!", "title", try #require(CloudKitLimits.recordTypeProblem("bad name!"))),
            ("T" + long, "title", try #require(CloudKitLimits.recordTypeProblem("T" + long))),
            ("Todo", "due-date", try #require(CloudKitLimits.fieldNameProblem("due-date"))),
            ("Todo", "f" + long, try #require(CloudKitLimits.fieldNameProblem("f" + long))),
        ]

        // The recipe's `schema:`, at the bad name.
        for (type, field, problem) in cases {
            let found = Self.recipeProblems(
                Self.recipe(zones: "  Lists: {}") + "\nschema:\n  \"\(type)\":\n    \"\(field)\": STRING\n")
            let errors = found.filter { $0.contains(": error: ") }
            #expect(errors.count == 1 && errors[0].hasSuffix("error: \(problem)"), "\(type).\(field): \(found)")
        }

        // The store: a save and a schema extension.
        let store = try Self.store()
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let lists = ZoneID(zoneName: "Lists")
        _ = try await store.modifyZones([.init(.create, lists)], in: .private, as: alice)
        for (type, field, problem) in cases {
            let record = Record(recordName: "r", recordType: type, zoneID: lists, fields: [field: .string("x")])
            let saved = try await store.modifyRecords(
                [.init(.create, record)], in: lists, database: .private, atomic: true, as: alice)
            #expect(Self.reason(saved[0]) == problem, "records: \(type).\(field)")
            let schema = Schema(recordTypes: [RecordTypeSchema(type, fields: [SchemaField(field, .string)])])
            await #expect(throws: ShareError.self) { _ = try await store.extendSchema(schema, as: alice) }
            do {
                _ = try await store.extendSchema(schema, as: alice)
            } catch let error as ShareError {
                #expect(error.reason == problem, "schema: \(type).\(field)")
            }
        }
        #expect(try await store.schema(in: .development, as: alice).recordTypes.isEmpty)

        // serve: `records/modify`'s outcome and `schema/extend`'s refusal.
        try await H.withEmulator { base in
            let owner = try await H.signIn(base, "alice@example.com")
            let query = ["ckAPIToken": H.apiToken, "ckWebAuthToken": owner.token]
            _ = try await H.raw(
                base, H.databasePath("private", "zones/modify"), query: query,
                body: #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Lists"}}}]}"#)
            for (type, field, problem) in cases {
                let operation: [String: Any] = [
                    "operationType": "create",
                    "record": [
                        "recordName": "r", "recordType": type, "fields": [field: ["value": "x", "type": "STRING"]],
                    ],
                ]
                let records = try await H.raw(
                    base, H.databasePath("private", "records/modify"), query: query,
                    body: Self.json(["zoneID": ["zoneName": "Lists"], "operations": [operation]]))
                let refusal = (records.json["records"] as? [[String: Any]])?.first
                #expect(refusal?["reason"] as? String == problem, "records: \(type).\(field)")
                let extension_ = try await H.raw(
                    base, H.databasePath("public", "schema/extend"), query: query,
                    body: Self.json([
                        "schema": [
                            "recordTypes": [
                                ["name": type, "fields": [["name": field, "type": "STRING", "indexes": [String]()]]]
                            ]
                        ]
                    ]))
                #expect(extension_.status == 400, "schema: \(type).\(field): \(extension_.text.prefix(300))")
                #expect(extension_.json["reason"] as? String == problem, "schema: \(type).\(field)")
            }
            let lookup = try await H.raw(
                base, H.databasePath("public", "schema/lookup"), query: query, method: "GET")
            #expect(lookup.status == 200 && !lookup.text.contains("Todo"), "\(lookup.text.prefix(300))")
        }
    }

    @Test("more than 200 operations a request: the store and serve refuse them in the same words")
    func operationsPerRequest() async throws {
        let count = CloudKitLimits.operationsPerRequest + 1
        let expected = "\(count) subscription operations in one request; CloudKit allows at most 200"
        #expect(throws: ShareError.self) {
            try CloudKitLimits.checkOperationCount(count, of: "subscription operations")
        }
        let store = try Self.store()
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let operations = (0..<count).map {
            SubscriptionOperation(.create, Subscription(subscriptionID: "s\($0)", kind: .query, recordType: "Todo"))
        }
        do {
            _ = try await store.modifySubscriptions(operations, in: .private, as: alice)
            Issue.record("the store took \(count) subscription operations")
        } catch let error as ShareError {
            #expect(error.reason == expected)
        }
        try await H.withEmulator { base in
            let owner = try await H.signIn(base, "alice@example.com")
            let query = ["ckAPIToken": H.apiToken, "ckWebAuthToken": owner.token]
            for (path, key, item, what) in [
                (
                    "records/modify", "operations", #"{"operationType": "delete", "record": {"recordName": "r"}}"#,
                    "operations"
                ),
                ("users/lookup/email", "users", #"{"emailAddress": "bob@example.com"}"#, "users"),
            ] {
                let answer = try await H.raw(
                    base, H.databasePath(path.hasPrefix("users") ? "public" : "private", path), query: query,
                    body: #"{"\#(key)": [\#(Array(repeating: item, count: count).joined(separator: ","))]}"#)
                #expect(answer.status == 400, "\(path): \(answer.text.prefix(300))")
                #expect(
                    answer.json["reason"] as? String
                        == "\(count) \(what) in one request; CloudKit allows at most 200", "\(path)")
            }
        }
    }

    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    // MARK: - Who may see a share

    @Test("who may resolve a share is who may accept it, in the store and over serve")
    func resolveIsAccept() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            let carol = try await H.signIn(base, "carol@example.com")
            let query = ["ckAPIToken": H.apiToken, "ckWebAuthToken": alice.token]
            _ = try await H.raw(
                base, H.databasePath("private", "zones/modify"), query: query,
                body: #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Lists"}}}]}"#)
            let saved = try await H.raw(
                base, H.databasePath("private", "records/modify"), query: query,
                body: #"{"zoneID": {"zoneName": "Lists"}, "operations": [{"operationType": "create", "record": "#
                    + #"{"recordType": "cloudkit.share", "recordName": "cloudkit.zoneshare", "participants": "#
                    + #"[{"userIdentity": {"lookupInfo": {"emailAddress": "bob@example.com"}}}]}}]}"#)
            let guid = try #require((saved.json["records"] as? [[String: Any]])?.first?["shortGUID"] as? String)
            var reasons: [String] = []
            for operation in ["records/resolve", "records/accept"] {
                let answer = try await H.raw(
                    base, H.databasePath("public", operation),
                    query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": carol.token],
                    body: #"{"shortGUIDs": [{"value": "\#(guid)"}]}"#)
                let result = (answer.json["results"] as? [[String: Any]])?.first
                #expect(result?["serverErrorCode"] as? String == "ACCESS_DENIED", "\(operation): \(answer.text)")
                reasons.append(result?["reason"] as? String ?? "")
            }
            #expect(reasons[0] == reasons[1])
        }
    }
}
