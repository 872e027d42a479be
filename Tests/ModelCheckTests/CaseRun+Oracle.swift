import ShareKit

// No existence oracle (`no-existence-oracle`): a user who may not see a zone (listed on none of its shares,
// `AccessRules.mayKnowOf`) or a record (outside what it may read) gets, for every operation about it, the
// answer a zone or record that does not exist gets: the same code and the same words, on every store.
extension CaseRun {
    /// One operation about a zone or a record, as a user of the shared database asks it.
    enum Probe: CaseIterable, CustomStringConvertible {
        case create, update, forceUpdate, replace, delete, forceDelete, saveShare, lookup, query, zoneChanges
        case zonesLookup, zoneTags, leave

        var description: String {
            switch self {
            case .create: "records/modify create"
            case .update: "records/modify update"
            case .forceUpdate: "records/modify forceUpdate"
            case .replace: "records/modify replace"
            case .delete: "records/modify delete"
            case .forceDelete: "records/modify forceDelete"
            case .saveShare: "records/modify of the zone's share"
            case .lookup: "records/lookup"
            case .query: "records/query"
            case .zoneChanges: "changes/zone"
            case .zonesLookup: "zones/lookup"
            case .zoneTags: "the zone's change tags"
            case .leave: "leaving the zone's share"
            }
        }

        /// The probes about a record inside a zone the caller reaches.
        static let aboutRecords: [Probe] = [.create, .update, .forceUpdate, .replace, .delete, .forceDelete, .lookup]
    }

    /// After a participant's save or delete: asks every operation about the zone (when `user` may not know of
    /// it) or about the record (when it may not read it) on every side, and the same about a zone or record
    /// that does not exist; the answers must be the same, names aside.
    func checkNoExistenceOracle(user: String, zone: String, record: String, step: Int) async throws {
        let caller = Self.recordName(user)
        let owner = owner(of: zone)
        guard caller != owner, spec.users.contains(user) else { return }
        let zones = try await sides[0].store.listZones(in: .private, as: owner)
        guard zones.contains(where: { $0.zoneID.zoneName == zone }) else { return }
        let shares = try await ownerShares(zone: zone, owner: owner)
        let probes: [Probe]
        var missingZone = zone
        var missingRecord = record
        if !AccessRules.mayKnowOf(caller: caller, zoneOwner: owner, shares: shares) {
            probes = Probe.allCases
            missingZone = zone + "Missing"
        } else {
            guard let found = try await sides[0].ownerRecord(record, zone: zone, owner: owner) else { return }
            let (share, _) = try await sides[0].coveringShare(zone: zone, record: found.recordName, owner: owner)
            guard !AccessRules.access(caller: caller, zoneOwner: owner, share: share).canRead else { return }
            probes = Probe.aboutRecords
            missingRecord = record + "-missing"
        }
        for side in sides {
            for probe in probes {
                let seen = await answer(probe, zone: zone, record: record, as: caller, on: side, owner: owner)
                    .replacingOccurrences(of: zone, with: "ZONE").replacingOccurrences(of: record, with: "RECORD")
                let none = await answer(
                    probe, zone: missingZone, record: missingRecord, as: caller, on: side, owner: owner
                )
                .replacingOccurrences(of: missingZone, with: "ZONE")
                .replacingOccurrences(of: missingRecord, with: "RECORD")
                report.oracleProbes += 1
                guard seen == none else {
                    throw Violation(
                        invariant: "no-existence-oracle",
                        detail: "\(probe) by \(user) on \(side.label) about \(zone)/\(record), which it may not see, "
                            + "answered \(seen); one about what does not exist answers \(none)",
                        step: step)
                }
            }
        }
        // A refusal changes nothing.
        try await compareViews(step: step)
    }

    /// The owner's shares of a zone: its zone-wide share and every hierarchy's, from its change feed.
    private func ownerShares(zone: String, owner: UserRecordName) async throws -> [Share] {
        var shares: [String: Share] = [:]
        var token: ChangeToken?
        while true {
            let page = try await sides[0].store.zoneChanges(
                ZoneID(zoneName: zone), in: .private, since: token, resultsLimit: nil, as: owner)
            for share in page.changedShares { shares[share.recordName] = share }
            token = page.token
            if !page.moreComing { break }
        }
        return Array(shares.values)
    }

    /// What `probe` answers on `side`: `ok`, or the refusal's code and reason.
    private func answer(
        _ probe: Probe, zone: String, record: String, as caller: UserRecordName, on side: StoreSide,
        owner: UserRecordName
    ) async -> String {
        let zoneID = ZoneID(zoneName: zone, ownerRecordName: owner)
        let written = Record(
            recordName: record, recordType: "Note", zoneID: zoneID, fields: ["probe": .string("x")], changeTag: "1")
        func modify(_ operation: RecordOperation) async throws {
            let outcomes = try await side.store.modifyRecords(
                [operation], in: zoneID, database: .shared, atomic: true, as: caller)
            if let error = outcomes.first?.error { throw error }
        }
        do {
            switch probe {
            case .create: try await modify(RecordOperation(.create, written))
            case .update: try await modify(RecordOperation(.update, written))
            case .forceUpdate: try await modify(RecordOperation(.forceUpdate, written))
            case .replace: try await modify(RecordOperation(.replace, written))
            case .delete: try await modify(RecordOperation(.delete, written))
            case .forceDelete: try await modify(RecordOperation(.forceDelete, written))
            case .saveShare:
                try await modify(
                    RecordOperation(.forceUpdate, share: Share.zoneWide(zoneID, publicPermission: .readOnly)))
            case .lookup:
                let outcomes = try await side.store.lookupRecords([record], in: zoneID, database: .shared, as: caller)
                if let error = outcomes.first?.error { throw error }
            case .query:
                _ = try await side.store.queryRecords(
                    RecordQuery(recordType: "Note"), in: zoneID, database: .shared, as: caller)
            case .zoneChanges:
                _ = try await side.store.zoneChanges(zoneID, in: .shared, since: nil, resultsLimit: nil, as: caller)
            case .zonesLookup:
                let found = try await side.store.lookupZones([zoneID], in: .shared, as: caller)
                if case .failure(let error)? = found.first { throw error }
            case .zoneTags:
                let tags = try await side.store.zoneTags([zoneID], in: .shared, as: caller)
                if case .some(.none) = tags.first { return "no such zone" }
            case .leave:
                try await side.store.leaveShare(recordName: zoneShareRecordName, in: zoneID, as: caller)
            }
            return "ok"
        } catch let error as ShareError {
            return "\(error.code.rawValue): \(error.reason)"
        } catch {
            return "\(error)"
        }
    }
}
