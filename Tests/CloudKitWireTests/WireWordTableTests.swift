import CloudKitWire
import Foundation
import SharelaneTestSupport
import ShareKit
import Testing

/// The words of Apple's CloudKit Web Services Reference, one table per ShareKit enum that goes on the wire,
/// keyed by case and written out here by hand: a ShareKit raw value (which spells SQLite columns and saved
/// plans) may change, and these must not.
enum ReferenceWords {
    static let fieldTypes: [FieldType: String] = [
        .string: "STRING", .int64: "INT64", .double: "DOUBLE", .timestamp: "TIMESTAMP", .bytes: "BYTES",
        .reference: "REFERENCE", .assetID: "ASSETID", .location: "LOCATION", .stringList: "STRING_LIST",
        .int64List: "INT64_LIST", .doubleList: "DOUBLE_LIST", .timestampList: "TIMESTAMP_LIST",
        .bytesList: "BYTES_LIST", .referenceList: "REFERENCE_LIST", .locationList: "LOCATION_LIST",
        .assetIDList: "ASSETID_LIST",
    ]
    static let operationTypes: [OperationKind: String] = [
        .create: "create", .update: "update", .forceUpdate: "forceUpdate", .replace: "replace",
        .forceReplace: "forceReplace", .delete: "delete", .forceDelete: "forceDelete",
    ]
    static let zoneOperationTypes: [ZoneOperation.Kind: String] = [.create: "create", .delete: "delete"]
    static let subscriptionOperationTypes: [SubscriptionOperation.Kind: String] = [
        .create: "create", .update: "update", .delete: "delete",
    ]
    static let subscriptionTypes: [Subscription.Kind: String] = [
        .query: "query", .zone: "zone", .database: "database",
    ]
    static let triggers: [Subscription.Trigger: String] = [.create: "create", .update: "update", .delete: "delete"]
    static let comparators: [QueryFilter.Comparator: String] = [
        .equals: "EQUALS", .notEquals: "NOT_EQUALS", .lessThan: "LESS_THAN", .lessThanOrEquals: "LESS_THAN_OR_EQUALS",
        .greaterThan: "GREATER_THAN", .greaterThanOrEquals: "GREATER_THAN_OR_EQUALS", .near: "NEAR",
        .containsAllTokens: "CONTAINS_ALL_TOKENS", .containsAnyTokens: "CONTAINS_ANY_TOKENS", .in: "IN",
        .notIn: "NOT_IN", .listContains: "LIST_CONTAINS", .notListContains: "NOT_LIST_CONTAINS",
        .listContainsAny: "LIST_CONTAINS_ANY", .notListContainsAny: "NOT_LIST_CONTAINS_ANY",
        .beginsWith: "BEGINS_WITH", .notBeginsWith: "NOT_BEGINS_WITH",
        .listMemberBeginsWith: "LIST_MEMBER_BEGINS_WITH", .notListMemberBeginsWith: "NOT_LIST_MEMBER_BEGINS_WITH",
        .listContainsAll: "LIST_CONTAINS_ALL", .notListContainsAll: "NOT_LIST_CONTAINS_ALL",
    ]
    static let errorCodes: [ServerErrorCode: String] = [
        .accessDenied: "ACCESS_DENIED", .atomicError: "ATOMIC_ERROR", .authenticationFailed: "AUTHENTICATION_FAILED",
        .authenticationRequired: "AUTHENTICATION_REQUIRED", .badRequest: "BAD_REQUEST", .conflict: "CONFLICT",
        .exists: "EXISTS", .internalError: "INTERNAL_ERROR", .notFound: "NOT_FOUND",
        .quotaExceeded: "QUOTA_EXCEEDED", .throttled: "THROTTLED", .tryAgainLater: "TRY_AGAIN_LATER",
        .validatingReferenceError: "VALIDATING_REFERENCE_ERROR", .zoneNotFound: "ZONE_NOT_FOUND",
    ]
    static let permissions: [Permission: String] = [.none: "NONE", .readOnly: "READ_ONLY", .readWrite: "READ_WRITE"]
    static let participantTypes: [ParticipantRole: String] = [
        .owner: "OWNER", .administrator: "ADMINISTRATOR", .privateUser: "USER", .publicUser: "PUBLIC_USER",
    ]
    static let acceptanceStatuses: [AcceptanceStatus: String] = [
        .pending: "INVITED", .accepted: "ACCEPTED", .removed: "REMOVED",
    ]
    static let referenceActions: [ReferenceAction: String] = [
        .none: "NONE", .deleteSelf: "DELETE_SELF", .validate: "VALIDATE",
    ]
    static let databases: [DatabaseScope: String] = [.private: "private", .shared: "shared", .public: "public"]
    static let environments: [CloudKitEnvironment: String] = [
        .development: "development", .production: "production",
    ]
}

@Suite struct WireWordTableTests {
    /// Every case has its word from the table, and the word reads back as that case.
    private func check<Case: CaseIterable & Hashable>(
        _ table: [Case: String], write: (Case) -> String, read: (String) -> Case?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(table.count == Case.allCases.count, "the table names every case", sourceLocation: sourceLocation)
        for each in Case.allCases {
            #expect(write(each) == table[each], "\(each)", sourceLocation: sourceLocation)
            if let word = table[each] { #expect(read(word) == each, "\(word)", sourceLocation: sourceLocation) }
        }
        #expect(read("no-such-word") == nil, sourceLocation: sourceLocation)
    }

    @Test func everyCaseIsSpelledAsTheReferenceSpellsIt() {
        check(ReferenceWords.fieldTypes, write: WireSpelling.fieldType, read: WireSpelling.fieldType)
        check(ReferenceWords.operationTypes, write: WireSpelling.operationType, read: WireSpelling.operationKind)
        check(
            ReferenceWords.zoneOperationTypes, write: WireSpelling.zoneOperationType,
            read: WireSpelling.zoneOperationKind)
        check(
            ReferenceWords.subscriptionOperationTypes, write: WireSpelling.subscriptionOperationType,
            read: WireSpelling.subscriptionOperationKind)
        check(
            ReferenceWords.subscriptionTypes, write: WireSpelling.subscriptionType, read: WireSpelling.subscriptionKind)
        check(ReferenceWords.triggers, write: WireSpelling.trigger, read: WireSpelling.trigger)
        check(ReferenceWords.comparators, write: WireSpelling.comparator, read: WireSpelling.comparator)
        check(ReferenceWords.errorCodes, write: WireSpelling.errorCode, read: WireSpelling.errorCode)
        check(ReferenceWords.permissions, write: WireSpelling.permission, read: WireSpelling.permission)
        check(ReferenceWords.participantTypes, write: WireSpelling.participantType, read: WireSpelling.participantRole)
        check(ReferenceWords.acceptanceStatuses, write: WireSpelling.acceptanceStatus, read: WireSpelling.acceptance)
        check(ReferenceWords.referenceActions, write: WireSpelling.referenceAction, read: WireSpelling.referenceAction)
        check(ReferenceWords.databases, write: WireSpelling.database, read: WireSpelling.database)
        check(ReferenceWords.environments, write: WireSpelling.environment, read: WireSpelling.environment)
    }

    // MARK: - The writers use the words

    private func json(_ body: some Encodable) throws -> [String: Any] {
        let data = try WireCoding.body(body)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private static let zone = ZoneID(zoneName: "Z")

    private static func sample(_ type: FieldType) -> FieldValue {
        if let element = type.elementType { return .list(elementType: element, [sample(element)]) }
        switch type {
        case .string: return .string("s")
        case .int64: return .int64(1)
        case .double: return .double(1.5)
        case .timestamp: return .timestamp(1_700_000_000_000)
        case .bytes: return .bytes(Data([1, 2]))
        case .reference: return .reference(Reference(recordName: "r"))
        case .assetID: return .assetID("asset-1")
        case .location: return .location(Location(latitude: 1, longitude: 2))
        default: return .string("unreachable")
        }
    }

    @Test func aRecordsFieldTypesAndOperationTypesAreTheReferencesWords() throws {
        let fields = Dictionary(uniqueKeysWithValues: FieldType.allCases.map { ("f\($0)", Self.sample($0)) })
        let record = Record(recordName: "r", recordType: "T", zoneID: Self.zone, fields: fields, changeTag: "t")
        for kind in OperationKind.allCases {
            let body = try json(ModifyRecordsRequest([RecordOperation(kind, record)], in: Self.zone, atomic: false))
            let operation = try #require((body["operations"] as? [[String: Any]])?.first)
            #expect(operation["operationType"] as? String == ReferenceWords.operationTypes[kind])
            guard !kind.isDelete else { continue }
            let written = try #require((operation["record"] as? [String: Any])?["fields"] as? [String: [String: Any]])
            for type in FieldType.allCases {
                #expect(written["f\(type)"]?["type"] as? String == ReferenceWords.fieldTypes[type], "\(type)")
            }
        }
    }

    @Test func queriesAndSubscriptionsWriteTheReferencesWords() throws {
        for comparator in QueryFilter.Comparator.allCases {
            let query = RecordQuery(recordType: "T", filters: [QueryFilter("f", comparator, .string("x"))])
            let body = try json(QueryRecordsRequest(query, in: Self.zone))
            let filter = try #require(((body["query"] as? [String: Any])?["filterBy"] as? [[String: Any]])?.first)
            #expect(filter["comparator"] as? String == ReferenceWords.comparators[comparator])
            #expect(
                try JSONDecoder().decode(
                    QueryRecordsRequest.self, from: WireCoding.body(QueryRecordsRequest(query, in: Self.zone))
                ).recordQuery().filters.first?.comparator == comparator)
        }
        for kind in Subscription.Kind.allCases {
            let subscription = Subscription(
                subscriptionID: "s", kind: kind, recordType: kind == .query ? "T" : nil,
                zoneID: kind == .database ? nil : Self.zone)
            for operation in SubscriptionOperation.Kind.allCases {
                let body = try json(ModifySubscriptionsRequest([SubscriptionOperation(operation, subscription)]))
                let written = try #require((body["operations"] as? [[String: Any]])?.first)
                #expect(written["operationType"] as? String == ReferenceWords.subscriptionOperationTypes[operation])
                if operation != .delete {
                    let type = (written["subscription"] as? [String: Any])?["subscriptionType"] as? String
                    #expect(type == ReferenceWords.subscriptionTypes[kind])
                }
            }
        }
        for kind in ZoneOperation.Kind.allCases {
            let body = try json(ModifyZonesRequest([ZoneOperation(kind, Self.zone)]))
            let written = try #require((body["operations"] as? [[String: Any]])?.first)
            #expect(written["operationType"] as? String == ReferenceWords.zoneOperationTypes[kind])
        }
    }

    @Test func errorsAndPathsWriteTheReferencesWords() throws {
        for code in ServerErrorCode.allCases {
            let body = try json(WireError(ShareError(code, "why")))
            #expect(body["serverErrorCode"] as? String == ReferenceWords.errorCodes[code])
        }
        for database in DatabaseScope.allCases {
            let path = WireOperation.recordsQuery.fullPath(container: "c", environment: "e", database: database)
            #expect(path == "/database/1/c/e/\(ReferenceWords.databases[database]!)/records/query")
        }
    }

    @Test func schemaBodiesWriteTheReferencesFieldTypesAndReadThemBack() throws {
        let fields = FieldType.allCases.map { SchemaField("f\($0)", $0, indexes: .queryable) }
        let schema = Schema(recordTypes: [RecordTypeSchema("T", fields: fields)])
        let data = try WireCoding.bodyEncoder().encode(SchemaResponse(schema: schema))
        let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let types = try #require((body["schema"] as? [String: Any])?["recordTypes"] as? [[String: Any]])
        let written = try #require(types.first?["fields"] as? [[String: Any]])
        #expect(written.count == FieldType.allCases.count)
        for field in written {
            let name = try #require(field["name"] as? String)
            let type = try #require(FieldType.allCases.first { "f\($0)" == name })
            #expect(field["type"] as? String == ReferenceWords.fieldTypes[type], "\(name)")
        }
        #expect(try JSONDecoder().decode(SchemaResponse.self, from: data).schema == schema)
        let changes = [
            SchemaChange(.addType, recordType: "T"),
            SchemaChange(.changeType, recordType: "T", before: fields[0], after: fields[1]),
        ]
        let answer = try WireCoding.bodyEncoder().encode(SchemaChangesResponse(changes: changes))
        #expect(try JSONDecoder().decode(SchemaChangesResponse.self, from: answer).changes == changes)
        #expect(String(decoding: answer, as: UTF8.self).contains(#""type":"STRING""#))
    }

    // MARK: - No wire writer asks ShareKit for a raw value

    /// The ShareKit enums that go on the wire, and the names of the members that hold them.
    private static let wireEnums = [
        "FieldType", "OperationKind", "ZoneOperation.Kind", "SubscriptionOperation.Kind", "Subscription.Kind",
        "Subscription.Trigger", "QueryFilter.Comparator", "Comparator", "ServerErrorCode", "Permission",
        "ParticipantRole", "AcceptanceStatus", "ReferenceAction", "DatabaseScope", "CloudKitEnvironment",
        "SchemaChange.Kind",
    ]
    private static let wireMembers = [
        "code", "kind", "type", "comparator", "database", "environment", "permission", "publicPermission", "role",
        "acceptance", "status", "action", "trigger", "scope",
    ]

    @Test func noWireCodeSpellsAShareKitRawValue() throws {
        var files: [URL] = []
        for module in ["CloudKitWire", "Emulator"] {
            let folder = BuiltProducts.packageRoot.appendingPathComponent("Sources/\(module)")
            let found = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            files += found.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        }
        #expect(files.count > 50)
        let typed = Self.wireEnums.flatMap { type in
            ["\(type)(rawValue:", "\(type).init(rawValue:", "\(type).allCases.map(\\.rawValue)"]
        }
        // Simple word boundaries: Unicode's would read `operation.kind` as one word.
        let member = try Regex(#"\b(\#(Self.wireMembers.joined(separator: "|")))\??\.rawValue\b"#).wordBoundaryKind(
            .simple)
        let caseRaw = try Regex(
            #"\b(\#(Self.wireEnums.joined(separator: "|").replacingOccurrences(of: ".", with: "\\.")))\.[a-zA-Z]+\.rawValue\b"#
        ).wordBoundaryKind(.simple)
        var found: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                if typed.contains(where: { code.contains($0) }) || code.contains(member) || code.contains(caseRaw) {
                    found.append("\(file.lastPathComponent):\(number + 1): \(code)")
                }
            }
        }
        #expect(found == [], "spell these through WireSpelling")
    }
}
