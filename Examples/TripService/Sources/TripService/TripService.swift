import Foundation

/// The server's trip logic: stops are records of type `Stop` in a trip's zone, which its owner shares.
public struct TripService: Sendable {
    public var client: CloudKitClient

    public init(client: CloudKitClient) { self.client = client }

    /// A zone as `database` names it: a participant's shared database names the zone's owner.
    static func zoneID(_ zone: String, owner: String?) -> [String: Any] {
        var zoneID: [String: Any] = ["zoneName": zone]
        if let owner { zoneID["ownerRecordName"] = owner }
        return zoneID
    }

    /// Adds a stop to the trip in `zone`: as its owner (`owner` nil, their private database) or as a
    /// participant (`owner` the owner's user record name, the shared database).
    public func addStop(
        _ name: String, title: String, zone: String, owner: String? = nil, token: String
    ) async throws -> CloudKitClient.Answer {
        let body: [String: Any] = [
            "zoneID": Self.zoneID(zone, owner: owner),
            "operations": [
                [
                    "operationType": "create",
                    "record": ["recordName": name, "recordType": "Stop", "fields": ["title": ["value": title]]],
                ]
            ],
        ]
        return try await client.post(
            owner == nil ? "private" : "shared", "records/modify",
            body: JSONSerialization.data(withJSONObject: body), as: .user(webAuthToken: token))
    }

    /// The names of the stops in `zone`, sorted, as the caller of `token` sees them.
    public func stops(zone: String, owner: String? = nil, token: String) async throws -> [String] {
        let body: [String: Any] = ["zoneID": Self.zoneID(zone, owner: owner), "query": ["recordType": "Stop"]]
        let answer = try await client.post(
            owner == nil ? "private" : "shared", "records/query",
            body: JSONSerialization.data(withJSONObject: body), as: .user(webAuthToken: token))
        return answer.records.compactMap { $0["recordName"] as? String }.sorted()
    }

    /// Posts a notice everyone reads to the public database, signed with the server's key.
    public func postNotice(_ name: String, text: String, as server: CloudKitClient.Caller) async throws
        -> CloudKitClient.Answer
    {
        let body: [String: Any] = [
            "operations": [
                [
                    "operationType": "create",
                    "record": ["recordName": name, "recordType": "Notice", "fields": ["text": ["value": text]]],
                ]
            ]
        ]
        return try await client.post(
            "public", "records/modify", body: JSONSerialization.data(withJSONObject: body), as: server)
    }
}
