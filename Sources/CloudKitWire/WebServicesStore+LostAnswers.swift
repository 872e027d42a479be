import Foundation
import ShareKit

// Writes whose answer was lost (Docs/CloudKit.md, "Limits the client follows"): a `records/modify` whose
// connection closed after it went out is sent again (`WebServicesTransport`), and when its first attempt was
// applied, the second meets the first one's work: a `create` answers `EXISTS`, an `update`, `replace` or
// `delete` with the old change tag `CONFLICT`, a delete of what is gone `NOT_FOUND`. Those operations read the
// record back (one `records/lookup`) and count as done when it holds what was sent, so nothing is written
// twice and an apply goes on. Only operations that were sent again after a lost connection are settled so: the
// same answers on a first attempt are the caller's to hear.
extension WebServicesStore {
    /// The outcomes of `batch`, with each failure that its own earlier attempt explains replaced by what the
    /// store holds: `saved` / `savedShare` with the record or share read back when it holds what was sent,
    /// `deleted` when a delete's record is gone. `landed` are the indices whose request was sent again after a
    /// lost connection. For an atomic request every operation must be settled so, or none is (they were
    /// applied together or not at all).
    func settlingLostAnswers(
        _ batch: [RecordOperation], _ answered: [RecordOutcome], landed: Set<Int>, in zoneID: ZoneID,
        database: DatabaseScope, atomic: Bool, as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        let candidates = answered.indices.filter { index in
            guard landed.contains(index), let code = answered[index].error?.code else { return false }
            return Self.mayBeOwnEarlierAttempt(batch[index].kind, code, atomic: atomic)
        }
        guard !candidates.isEmpty else { return answered }
        if atomic, answered.indices.contains(where: { answered[$0].error != nil && !candidates.contains($0) }) {
            return answered
        }
        let live = try await readBack(candidates.map { batch[$0] }, in: zoneID, database: database, as: user)
        var result = answered
        var settled = 0
        for (index, now) in zip(candidates, live) {
            guard let outcome = Self.settled(batch[index], now: now) else { continue }
            result[index] = outcome
            settled += 1
        }
        if atomic, settled < candidates.count { return answered }
        if settled > 0 {
            logger.info(
                "a lost answer's writes were applied; read back and counted once",
                metadata: ["operations": "\(settled)", "zone": "\(zoneID.zoneName)"])
        }
        return result
    }

    /// The live service answers a `create` of a record that exists `CONFLICT` ("record to insert already
    /// exists"), where the embedded store says `EXISTS`: the client hears `EXISTS` from every store, so that a
    /// caller (and a lost answer's retry, below) meets one word for it. A stale change tag's `CONFLICT` is only
    /// ever an update's, a replace's or a delete's.
    static func existsForCreates(_ batch: [RecordOperation], _ answered: [RecordOutcome]) -> [RecordOutcome] {
        zip(batch, answered).map { operation, outcome in
            guard operation.kind == .create, case .failed(let name, var error) = outcome, error.code == .conflict
            else { return outcome }
            error.code = .exists
            return .failed(recordName: name, error)
        }
    }

    /// Whether `code` is what a second attempt of an operation of `kind` meets when its first attempt was
    /// applied.
    static func mayBeOwnEarlierAttempt(_ kind: OperationKind, _ code: ServerErrorCode, atomic: Bool) -> Bool {
        if atomic, code == .atomicError { return true }
        switch kind {
        case .create: return code == .exists
        case .update, .replace: return code == .conflict
        case .delete: return code == .conflict || code == .notFound
        case .forceDelete: return code == .notFound
        case .forceUpdate, .forceReplace: return false
        }
    }

    /// Each operation's record or share as the store holds it now (nil: gone), in order; a new hierarchy
    /// share, which the store named, is found through its root record.
    private func readBack(
        _ operations: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    ) async throws -> [RecordOutcome?] {
        var names = operations.map(\.recordName)
        let unnamedShares = operations.indices.filter { names[$0].isEmpty }
        if !unnamedShares.isEmpty {
            let roots = unnamedShares.compactMap { operations[$0].share?.rootRecordName }
            let found = try await lookupRecords(roots, in: zoneID, database: database, as: user)
            var shareOfRoot: [String: String] = [:]
            for outcome in found {
                if case .saved(let root) = outcome, let share = root.shareRecordName {
                    shareOfRoot[root.recordName] = share
                }
            }
            for index in unnamedShares {
                names[index] = operations[index].share?.rootRecordName.flatMap { shareOfRoot[$0] } ?? ""
            }
        }
        let asked = names.filter { !$0.isEmpty }
        let outcomes = asked.isEmpty ? [] : try await lookupRecords(asked, in: zoneID, database: database, as: user)
        var byName: [String: RecordOutcome] = [:]
        for (name, outcome) in zip(asked, outcomes) { byName[name] = outcome }
        return names.map { name in
            guard let outcome = byName[name] else { return nil }
            if case .failed = outcome { return nil }
            return outcome
        }
    }

    /// The outcome an operation's earlier attempt had, when what the store holds now is what it sent: the
    /// record or share read back, or its deletion; nil when it is not (the failure stands).
    static func settled(_ operation: RecordOperation, now: RecordOutcome?) -> RecordOutcome? {
        if operation.kind.isDelete {
            return now == nil ? .deleted(recordName: operation.recordName) : nil
        }
        switch (operation.item, now) {
        case (.record(let sent), .saved(let live)?):
            return holds(live, sent, wholly: operation.kind == .create || operation.kind == .replace)
                ? .saved(live) : nil
        case (.share(let sent), .savedShare(let live)?):
            return holds(live, sent) ? .savedShare(live) : nil
        default:
            return nil
        }
    }

    /// Whether a live record holds what was sent: its type, parent and fields (every field, and no other,
    /// when the record was sent whole), and its share when one was named.
    static func holds(_ live: Record, _ sent: Record, wholly: Bool) -> Bool {
        guard live.recordType == sent.recordType || sent.recordType.isEmpty, live.parent == sent.parent else {
            return false
        }
        if let share = sent.shareRecordName, live.shareRecordName != share { return false }
        if wholly, Set(live.fields.keys) != Set(sent.fields.keys) { return false }
        return sent.fields.allSatisfy { name, value in live.fields[name].map { $0.isSameValue(as: value) } ?? false }
    }

    /// Whether a live share holds what was sent: its root, public permission, title (when one was sent), and
    /// participants (each by user, email address or phone number, with the permission and role sent; the owner
    /// and public users, whom the store keeps, aside).
    static func holds(_ live: Share, _ sent: Share) -> Bool {
        guard live.publicPermission == sent.publicPermission,
            sent.rootRecordName == nil || live.rootRecordName == sent.rootRecordName
        else { return false }
        if let title = sent.title, live.title != title { return false }
        let invited = { (participant: Participant) in participant.role != .owner && participant.role != .publicUser }
        let wanted = sent.participants.filter(invited)
        let present = live.participants.filter(invited)
        guard wanted.count == present.count else { return false }
        return wanted.allSatisfy { participant in
            present.contains { other in
                Self.samePerson(participant, other) && other.permission == participant.permission
                    && other.role == participant.role
            }
        }
    }

    private static func samePerson(_ a: Participant, _ b: Participant) -> Bool {
        if !a.userRecordName.isEmpty { return a.userRecordName == b.userRecordName }
        if let email = a.email {
            return b.email.map { EmailAddress.normalized($0) } == EmailAddress.normalized(email)
        }
        if let phone = a.phone { return b.phone == phone }
        return false
    }
}

extension RecordOperation {
    /// The share this operation saves or deletes, if it is about one.
    var share: Share? {
        if case .share(let share) = item { return share }
        return nil
    }
}
