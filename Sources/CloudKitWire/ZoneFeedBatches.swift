import ShareKit

/// Change-feed reads of several zones made at once, as one user in one database, sent together: CloudKit's
/// `changes/zone` takes many zones a request, each with its own token and limit, and answers each apart. A plan
/// that reads what changed in a hundred zones then sends a few requests, not a hundred (over a link of 80 ms,
/// 0.9 s less with `--parallelism 10`). A read made alone goes alone, as soon as nothing else joins it.
actor ZoneFeedBatches {
    /// The reads that travel together.
    struct Key: Hashable {
        var user: UserRecordName?
        var database: DatabaseScope
    }

    /// One zone's read waiting for its answer.
    private struct Read {
        var zone: ZoneChangesRequest.ZoneRequest
        var answer: CheckedContinuation<ZoneChangesResponse.ZoneResult, any Error>
    }

    /// Sends one `changes/zone` of these zones.
    typealias Send = @Sendable (Key, [ZoneChangesRequest.ZoneRequest]) async throws -> ZoneChangesResponse

    /// The most zones a request carries (Apple documents no limit; CloudKit's 200 records a response are
    /// counted a zone).
    let zonesPerRequest: Int
    private let send: Send
    private var queued: [Key: [Read]] = [:]
    private var gathering: Set<Key> = []

    init(zonesPerRequest: Int, send: @escaping Send) {
        self.zonesPerRequest = max(1, zonesPerRequest)
        self.send = send
    }

    /// One zone's changes, read with whatever other zones' reads are made at the same moment.
    func read(_ zone: ZoneChangesRequest.ZoneRequest, as key: Key) async throws -> ZoneChangesResponse.ZoneResult {
        try await withCheckedThrowingContinuation { answer in
            queued[key, default: []].append(Read(zone: zone, answer: answer))
            if gathering.insert(key).inserted {
                Task { await self.flush(key) }
            }
        }
    }

    /// Lets the reads made at the same moment join (until no more come), then sends them, a few zones a
    /// request, every request at once (the store's bound holds them to `--parallelism` on the wire).
    private func flush(_ key: Key) async {
        var count = -1
        var yields = 0
        while count != queued[key]?.count ?? 0, yields < 16 {
            count = queued[key]?.count ?? 0
            await Task.yield()
            yields += 1
        }
        gathering.remove(key)
        var pending = queued.removeValue(forKey: key) ?? []
        while !pending.isEmpty {
            // A zone once a request: two reads of one zone are told apart by the zone alone.
            var batch: [Read] = []
            var names = Set<String>()
            var rest: [Read] = []
            for read in pending {
                if batch.count < zonesPerRequest, names.insert(read.zone.zoneID.zoneName).inserted {
                    batch.append(read)
                } else {
                    rest.append(read)
                }
            }
            pending = rest
            let send = self.send
            Task {
                do {
                    let response = try await send(key, batch.map(\.zone))
                    for read in batch {
                        if let result = response.zones.first(where: { $0.zoneID?.zoneName == read.zone.zoneID.zoneName }
                        ) {
                            read.answer.resume(returning: result)
                        } else {
                            read.answer.resume(
                                throwing: ShareError(
                                    .internalError, "changes/zone answered nothing for this zone",
                                    subject: "zone \(read.zone.zoneID.zoneName)"))
                        }
                    }
                } catch {
                    for read in batch { read.answer.resume(throwing: error) }
                }
            }
        }
    }
}
