import Foundation
import Testing

/// Every key in the golden requests is one that Docs/CloudKit.md ("Spellings and request keys") lists for
/// that request, as Apple's CloudKit Web Services Reference gives them.
@Suite struct RequestShapeTests {
    /// Keys allowed at each path, from Docs/CloudKit.md ("records/modify: {operations: [{operationType, record}],
    /// zoneID?, atomic?, …}" and so on). `*` stands for any key (field names).
    static let record: Set<String> = [
        "recordName", "recordType", "recordChangeTag", "fields", "parent", "share", "forRecord", "publicPermission",
        "participants",
    ]
    static let allowed: [String: [String: Set<String>]] = [
        "records-modify.json": [
            "": ["operations", "zoneID", "atomic"], "operations[]": ["operationType", "record"],
            "operations[].record": record, "zoneID": ["zoneName", "ownerRecordName"],
            "operations[].record.parent": ["recordName"],
            "operations[].record.forRecord": ["recordName", "recordChangeTag"],
            "operations[].record.participants[]": [
                "participantId", "userIdentity", "type", "permission", "acceptanceStatus",
            ],
            "operations[].record.participants[].userIdentity": ["userRecordName", "nameComponents", "lookupInfo"],
            "operations[].record.participants[].userIdentity.nameComponents": ["givenName", "familyName"],
            "operations[].record.participants[].userIdentity.lookupInfo": [
                "emailAddress", "phoneNumber", "userRecordName",
            ],
        ],
        "records-modify-zoneshare.json": [
            "": ["operations", "zoneID", "atomic"], "operations[]": ["operationType", "record"],
            "operations[].record": record, "zoneID": ["zoneName", "ownerRecordName"],
        ],
        "records-lookup.json": [
            "": ["records", "zoneID"], "records[]": ["recordName"], "zoneID": ["zoneName", "ownerRecordName"],
        ],
        "records-query.json": [
            "": ["zoneID", "query", "resultsLimit", "continuationMarker"],
            "query": ["recordType", "filterBy", "sortBy"],
            "query.filterBy[]": ["comparator", "fieldName", "fieldValue"],
            "query.sortBy[]": ["fieldName", "ascending"],
            "query.filterBy[].fieldValue": ["value", "type"], "zoneID": ["zoneName", "ownerRecordName"],
        ],
        "zones-lookup.json": ["": ["zones"], "zones[]": ["zoneName", "ownerRecordName"]],
        "zones-modify.json": [
            "": ["operations"], "operations[]": ["operationType", "zone"], "operations[].zone": ["zoneID"],
            "operations[].zone.zoneID": ["zoneName", "ownerRecordName"],
        ],
        "changes-database.json": ["": ["syncToken", "resultsLimit"]],
        "changes-zone.json": [
            "": ["zones"], "zones[]": ["zoneID", "syncToken", "desiredKeys", "resultsLimit"],
            "zones[].zoneID": ["zoneName", "ownerRecordName"],
        ],
        "users-lookup-email.json": ["": ["users"], "users[]": ["emailAddress"]],
        "records-resolve.json": ["": ["shortGUIDs"], "shortGUIDs[]": ["value"]],
        "auth-signin.json": ["": ["emailAddress", "name"]],
        "auth-signin-batch.json": [
            "": ["users", "createUser", "container", "environment"], "users[]": ["emailAddress", "name"],
        ],
    ]

    @Test(arguments: allowed.keys.sorted())
    func goldenRequestsUseDocumentedKeys(_ file: String) throws {
        let data = try Data(contentsOf: WireGolden.files.url(file))
        let json = try JSONSerialization.jsonObject(with: data)
        let rules = Self.allowed[file] ?? [:]
        var unknown: [String] = []
        func walk(_ value: Any, _ path: String) {
            if let object = value as? [String: Any] {
                if path.hasSuffix(".fields") || path.contains(".fields.") { return }  // field names are free
                if let keys = rules[path] {
                    unknown += object.keys.filter { !keys.contains($0) }.map { "\(path).\($0)" }
                }
                for (key, child) in object { walk(child, path.isEmpty ? key : "\(path).\(key)") }
            } else if let array = value as? [Any] {
                for child in array { walk(child, path + "[]") }
            }
        }
        walk(json, "")
        #expect(unknown.isEmpty, "undocumented keys in \(file): \(unknown.sorted())")
        #expect(rules[""] != nil)
    }
}
