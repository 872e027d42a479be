import CloudKitWire
import Foundation
import Parity
import ShareKit
import SharelaneTestSupport
import Testing

/// `sharelane serve` checked key by key against the table of the reference's dictionaries kept in
/// Docs/Reference/Dictionaries.json: the checks of `sharelane conformance` (`ConformanceRun`: every operation
/// of the catalogue played over raw HTTP in shapes that make its answer hold each of its dictionaries, each
/// answer checked against the endpoint's answer dictionary, malformed and signed-out requests against the
/// error dictionary) run against a real serve, and the table itself checked against the catalogue and the
/// reference's types chapter.
@Suite(.serialized) struct ReferenceConformanceTests {
    typealias H = EmulatorHarness

    static let examples = ConformanceRun.examples

    @Test("the table names every operation serve routes, one example each, and the rendered table is in step")
    func theTableCoversTheCatalogue() throws {
        let table = try ReferenceTable.load()
        let served = Set(WireOperation.all.map(\.path))
        #expect(Set(table.endpoints.map(\.path)) == served)
        #expect(Set(Self.examples.map(\.path)) == served)
        #expect(table.endpoints.count == served.count, "one row per operation")
        for endpoint in table.endpoints {
            #expect(table.dictionary(endpoint.answer) != nil, "\(endpoint.path) answers \(endpoint.answer)")
            let codes = try #require(table.enumValues("serverErrorCode"))
            for code in endpoint.errors { #expect(codes.contains(code), "\(endpoint.path): \(code)") }
        }
        // Every type a key names is one the table has.
        for dictionary in table.dictionaries {
            for key in dictionary.keys {
                for part in key.type.split(separator: ":").map(String.init) where part.first?.isUppercase == true {
                    #expect(table.dictionary(part) != nil, "\(dictionary.name).\(key.key) names \(part)")
                }
            }
        }
        try GoldenFile(besides: #filePath, folder: "../../Docs/Reference").check(
            table.markdown(), against: "Dictionaries.md")
        // Docs/CloudKit.md says what a strict client can rely on, endpoint by endpoint, as the table does.
        let docs = try String(
            contentsOf: ReferenceTable.folder.deletingLastPathComponent().appendingPathComponent("CloudKit.md"),
            encoding: .utf8)
        for endpoint in table.endpoints {
            let row =
                "| [`\(endpoint.path)`](Reference/Dictionaries.md#\(ReferenceTable.anchor(endpoint.path))) | "
                + "\(endpoint.strict) |"
            #expect(docs.contains(row), "Docs/CloudKit.md lacks the strict-client row of \(endpoint.path)")
        }
    }

    @Test("the reference's types chapter is in the table whole")
    func theTypesChapterIsWhole() throws {
        let table = try ReferenceTable.load()
        // The chapter's dictionaries, by title, and the keys each documents.
        let chapter: [String: [String]] = [
            "Asset Dictionary": ["fileChecksum", "size", "referenceChecksum", "wrappingKey", "receipt", "downloadURL"],
            "Filter Dictionary": ["comparator", "fieldName", "fieldValue", "distance"],
            "Location Dictionary": [
                "latitude", "longitude", "horizontalAccuracy", "verticalAccuracy", "altitude", "speed", "course",
                "timestamp",
            ],
            "Name Components Dictionary": [
                "namePrefix", "givenName", "familyName", "nickname", "nameSuffix", "middleName",
                "phoneticRepresentation",
            ],
            "Notification Info Dictionary": [
                "alertBody", "alertLocalizationKey", "alertLocalizationArgs", "alertActionLocalizationKey",
                "alertLaunchImage", "soundName", "shouldBadge", "shouldSendContentAvailable",
            ],
            "Query Dictionary": ["recordType", "filterBy", "sortBy"],
            "Record Dictionary": [
                "recordName", "recordType", "recordChangeTag", "fields", "createShortGUID", "parent", "forRecord",
                "publicPermission", "participants", "created", "modified", "deleted", "shortGUID", "share", "owner",
                "currentUserParticipant",
            ],
            "Record Field Dictionary": ["value", "type"],
            "Reference Dictionary": ["recordName", "zoneID", "action"],
            "Share Participant Dictionary": ["userIdentity", "permission", "type", "acceptanceStatus"],
            "ShortGUID Dictionary": ["value", "shouldFetchRootRecord", "rootRecordDesiredKeys"],
            "ShortGUID Result Dictionary": [
                "containerIdentifier", "databaseScope", "rootRecordName", "ownerIdentity", "environment", "rootRecord",
                "zoneID", "share", "shortGUID", "potentialMatchList", "participantPermission", "participantStatus",
                "participantType", "webpageURL",
            ],
            "ShortGUID Fetch Error Dictionary": ["reason", "retryAfter", "serverErrorCode"],
            "Sort Descriptor Dictionary": ["fieldName", "ascending", "relativeLocation"],
            "Subscription Dictionary": [
                "zoneID", "subscriptionID", "subscriptionType", "query", "firesOn", "firesOnce", "notificationInfo",
                "zoneWide",
            ],
            "User Dictionary": ["userRecordName", "firstName", "lastName", "emailAddress"],
            "User Identity Dictionary": ["lookupInfo", "userRecordName", "nameComponents"],
            "User Identity Lookup Information Dictionary": ["emailAddress", "phoneNumber", "userRecordName"],
            "Zone Dictionary": ["zoneID", "syncToken", "atomic"],
            "Zone ID Dictionary": ["zoneName", "ownerRecordName"],
        ]
        for (title, keys) in chapter {
            let dictionary = try #require(table.dictionaries.first { $0.title == title }, "no \(title)")
            for key in keys {
                let entry = dictionary.keys.first { $0.key == key }
                #expect(entry != nil, "\(title) lacks \(key)")
                #expect(entry?.serve == nil, "\(title).\(key) is the reference's, not serve's own")
            }
        }
        // Created and modified are dictionaries of their own in the table.
        #expect(table.dictionary("Stamp")?.keys.map(\.key) == ["timestamp", "userRecordName", "deviceID"])
    }

    @Test("every check of sharelane conformance passes against serve, in one run")
    func everyCheckPasses() async throws {
        let table = try ReferenceTable.load()
        try await H.withEmulator { base in
            let run = ConformanceRun(
                table: table, container: H.container, environment: H.environment, apiToken: H.apiToken,
                people: .signIn)
            let outcomes = try await run.run(send: Self.send(to: base))
            for outcome in outcomes {
                #expect(outcome.passed, "\(outcome.check):\n\(outcome.problems.joined(separator: "\n"))")
                #expect(outcome.skipped == nil, "\(outcome.check) is skipped against serve")
            }
            // Every example, every malformed request, the signed-out one.
            let posts = Self.examples.filter { $0.method == "POST" }.count
            #expect(outcomes.count == Self.examples.count + posts + 1, "\(outcomes.map(\.check))")
        }
    }

    @Test("a check names the key path and what differs: a wrong answer fails it")
    func aWrongAnswerFails() throws {
        let table = try ReferenceTable.load()
        let answer = try JSONValue.parse(#"{"zones":[{"zoneID":{"zoneName":"A"},"syncToken":7,"colour":"red"}]}"#)
        let problems = table.problems(answer, as: "dict:ZonesAnswer", at: "zones/list")
        #expect(problems.contains { $0.hasPrefix("zones/list.zones[0].syncToken: not opaque") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("zones/list.zones[0].colour: not a key") }, "\(problems)")
    }

    /// Sends the run's requests over raw HTTP to serve at `base`, or to the absolute URL an upload names.
    static func send(to base: String) -> Replayer.Send {
        { request in
            var base = base
            var path = request.path
            var query = request.query.map { ($0.name, $0.value) }
            if let url = URLComponents(string: request.path), let scheme = url.scheme, let host = url.host {
                base = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
                path = url.path
                query += (url.queryItems ?? []).map { ($0.name, $0.value ?? "") }
            }
            let answer = try await H.raw(
                base, path, query: Dictionary(query) { _, last in last },
                body: request.body.data.map { String(decoding: $0, as: UTF8.self) }, method: request.method,
                contentType: request.headers["content-type"] ?? "application/octet-stream")
            return RecordedExchange.Response(
                status: answer.status, headers: answer.headers, body: RecordedExchange.Body(Data(answer.text.utf8)))
        }
    }
}

extension ReferenceTable {
    /// Docs/Reference of the checkout.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/Reference")

    /// The table as the repository keeps it.
    static func load() throws -> ReferenceTable { try load(from: folder.appendingPathComponent(fileName)) }
}
