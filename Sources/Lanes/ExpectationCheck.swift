import Foundation
import Recipe
import ShareKit

/// Checks an `expect` step as one user, changing nothing.
///
/// Reading is tried for real, as that user, in the database where that user reaches the zone. Writing,
/// deleting and sharing are not tried (that would change the store): the live share is read as the owner
/// and judged by ShareKit's access rules, the same functions the stores enforce.
struct ExpectationCheck {
    let session: LaneSession
    let actorHandle: String
    let actor: User
    let owner: User
    let location: SourceLocation
    /// `database: public`: the expectation reads the public database (its one zone) as the user.
    var isPublic = false

    private var store: any Store { session.store }
    private var isOwner: Bool { actor.recordName == owner.recordName }

    /// A notification in a few words: `create lunch`, `changes in Topics`, `changes in the private database`.
    static func summary(_ notification: SubscriptionNotification) -> String {
        switch notification.kind {
        case .query: "\(notification.reason?.rawValue ?? "change") \(notification.recordName ?? "")"
        case .zone: "changes in \(notification.zoneID.zoneName)"
        case .database: "changes in the \(notification.database.rawValue) database"
        }
    }

    /// Returns what was found when the expectation holds.
    /// - Throws: `LaneError.expectationFailed` when it does not.
    func verify(_ expectation: Expectation) async throws -> String? {
        switch expectation {
        case .notified(let subscription, let toBe):
            let found = try await session.takeNotifications(of: subscription, for: actor, location: location)
            let subject = "\(actorHandle) notified by \(subscription)"
            guard found.isEmpty != toBe else {
                throw LaneError.expectationFailed(
                    expected: "\(subject): \(toBe ? "yes" : "no")",
                    found: found.isEmpty
                        ? "no notification since subscribing or the last check"
                        : "\(found.count) notification\(found.count == 1 ? "" : "s")", location: location)
            }
            return found.isEmpty
                ? "no notification"
                : "\(found.count) notification\(found.count == 1 ? "" : "s")"
                    + ": " + found.map(Self.summary).joined(separator: ", ")
        case .access(let capability, let zone, let record, let toBe):
            let subject =
                "\(actorHandle) \(capability.rawValue) \(record.map { "record \(zone)/\($0)" } ?? "zone \(zone)")"
            try await requireZone(zone, expected: "\(subject): \(toBe ? "allowed" : "refused")")
            let (allowed, why) = try await access(capability, zone: zone, record: record)
            guard allowed == toBe else {
                throw LaneError.expectationFailed(
                    expected: "\(subject): \(toBe ? "allowed" : "refused")",
                    found: "\(allowed ? "allowed" : "refused") (\(why))", location: location)
            }
            return why
        case .records(let zone, let count):
            let (found, why) = try await recordCount(zone: zone)
            guard found == count else {
                throw LaneError.expectationFailed(
                    expected: "\(count) record\(count == 1 ? "" : "s") in \(zone) as \(actorHandle) sees it",
                    found: "\(found) (\(why))", location: location)
            }
            return why
        case .field(let zone, let record, let name, let equals):
            let (database, zoneID) = place(ofZone: zone)
            let outcome = try await store.lookupRecords([record], in: zoneID, database: database, as: actor.recordName)
            let subject = "\(isPublic ? "public " : "\(zone)/")\(record).\(name) as \(actorHandle) sees it"
            switch outcome.first {
            case .saved(let live):
                guard let value = live.fields[name] else {
                    throw LaneError.expectationFailed(
                        expected: "\(subject) = \(equals.displayString)",
                        found: "no field \(name) (fields: \(live.fields.keys.sorted().joined(separator: ", ")))",
                        location: location)
                }
                guard FieldValueMatch.matches(value, equals) else {
                    throw LaneError.expectationFailed(
                        expected: "\(subject) = \(equals.displayString)", found: value.displayString, location: location
                    )
                }
                return nil
            case .failed(_, let error):
                throw LaneError.expectationFailed(
                    expected: "\(subject) = \(equals.displayString)",
                    found: "no record: \(error) in \(actorHandle)'s \(database.rawValue) database", location: location)
            default:
                throw LaneError.expectationFailed(
                    expected: "\(subject) = \(equals.displayString)", found: "no record", location: location)
            }
        }
    }

    /// Fails an access check when the owner's private database holds no zone `zone`: every user is refused a
    /// zone that is not there, so `to_be: false` would pass on a mistyped zone, or before the recipe was
    /// applied, and prove nothing. (`records: 0` before an apply is a check a lane may mean, and stays one.)
    private func requireZone(_ zone: String, expected: String) async throws {
        guard !isPublic else { return }
        let found = try await store.lookupZones([ZoneID(zoneName: zone)], in: .private, as: owner.recordName)
        guard case .failure(let error)? = found.first, error.code == .zoneNotFound || error.code == .notFound else {
            return
        }
        throw LaneError.expectationFailed(
            expected: expected,
            found: "no zone \(zone) in its owner's private database, so the check proves nothing; apply the recipe "
                + "first, or check the zone's name", location: location)
    }

    /// Where the user reads the zone: the public database's one zone, the owner's private database, or
    /// anyone else's shared database.
    private func place(ofZone zone: String) -> (database: DatabaseScope, zoneID: ZoneID) {
        isPublic ? (.public, .defaultZone) : session.place(ofZone: zone, for: actor, owner: owner)
    }

    // MARK: - Access

    private func access(_ capability: Expectation.Capability, zone: String, record: String?) async throws -> (
        Bool, String
    ) {
        switch capability {
        case .read:
            return try await canRead(zone: zone, record: record)
        case .write, .delete, .share:
            return try await judged(capability, zone: zone, record: record)
        }
    }

    /// Tries the read as the user.
    private func canRead(zone: String, record: String?) async throws -> (Bool, String) {
        let (database, zoneID) = place(ofZone: zone)
        let place = "\(actorHandle)'s \(database.rawValue) database"
        do {
            if let record {
                let outcome = try await store.lookupRecords(
                    [record], in: zoneID, database: database, as: actor.recordName)
                switch outcome.first {
                case .saved, .savedShare: return (true, "read from \(place)")
                case .failed(_, let error) where Self.meansRefused(error):
                    return (false, "\(error.code.rawValue) from \(place)")
                case .failed(_, let error): throw error
                case .deleted, nil: return (false, "nothing came back from \(place)")
                }
            }
            let zones = try await store.lookupZones([zoneID], in: database, as: actor.recordName)
            switch zones.first {
            case .success: return (true, "zone listed in \(place)")
            case .failure(let error) where Self.meansRefused(error):
                return (false, "\(error.code.rawValue) from \(place)")
            case .failure(let error): throw error
            case nil: return (false, "nothing came back from \(place)")
            }
        } catch let error as ShareError where Self.meansRefused(error) {
            return (false, "\(error.code.rawValue) from \(place)")
        }
    }

    /// Judges a write, a delete or a share change by ShareKit's access rules, on the live share.
    private func judged(_ capability: Expectation.Capability, zone: String, record: String?) async throws -> (
        Bool, String
    ) {
        let (share, root) = try await session.coveringShare(zone: zone, record: record, owner: owner)
        let subject = record.map { "\(zone)/\($0)" } ?? zone
        let exists: Bool
        if let record {
            exists = try await session.ownerRecord(record, zone: zone, owner: owner) != nil
        } else {
            exists = true
        }
        let caller = actor.recordName
        let zoneOwner = owner.recordName
        let refusal: ShareError?
        switch capability {
        case .write where record == nil || !exists:
            // Writing to a zone, or a record that does not exist yet, means creating one.
            refusal = AccessRules.create(caller: caller, zoneOwner: zoneOwner, share: share, subject: subject)
        case .write:
            refusal = AccessRules.update(caller: caller, zoneOwner: zoneOwner, share: share, subject: subject)
        case .delete:
            guard exists else { return (false, "no record \(subject) to delete") }
            refusal = AccessRules.delete(
                caller: caller, zoneOwner: zoneOwner, share: share, isRoot: record != nil && record == root,
                subject: subject)
        case .share:
            if let share {
                refusal = AccessRules.updateShare(
                    caller: caller, zoneOwner: zoneOwner, existing: share, proposed: share, subject: subject)
            } else {
                refusal = AccessRules.createShare(caller: caller, zoneOwner: zoneOwner, subject: subject)
            }
        case .read:
            refusal = nil
        }
        return (
            refusal == nil,
            standing(in: share, root: root, zone: zone)
                + (refusal.map { ": " + Self.readable($0.reason, caller, actorHandle) } ?? "")
        )
    }

    /// How the user stands towards the share: `read-only private-user, accepted in the zone-wide share of Z`.
    private func standing(in share: Share?, root: String?, zone: String) -> String {
        if isOwner { return "\(actorHandle) owns zone \(zone)" }
        guard let share else { return "nothing in zone \(zone) is shared" }
        let shareName =
            share.isZoneWide ? "the zone-wide share of \(zone)" : "the share rooted at \(zone)/\(root ?? "?")"
        guard let participant = share.participant(actor.recordName) else {
            return
                "\(actorHandle) is not a participant of \(shareName) (public permission \(share.publicPermission.recipeName))"
        }
        let permission = share.permission(of: participant)
        return "\(actorHandle) is a \(permission.recipeName) \(participant.role.recipeName), "
            + "\(participant.acceptance.recipeName), in \(shareName)"
    }

    /// A rule's reason with the user's record name replaced by the recipe's handle.
    private static func readable(_ reason: String, _ recordName: String, _ handle: String) -> String {
        reason.replacingOccurrences(of: recordName, with: handle)
    }

    // MARK: - Contents

    /// Counts the records of the zone that the user sees, share records not counted.
    private func recordCount(zone: String) async throws -> (Int, String) {
        let (database, zoneID) = session.place(ofZone: zone, for: actor, owner: owner)
        let place = "\(actorHandle)'s \(database.rawValue) database"
        let count: Int
        do {
            count = try await store.wholeZone(zoneID, in: database, as: actor.recordName).records.count
        } catch let error as ShareError where Self.meansRefused(error) {
            return (0, "zone not visible: \(error.code.rawValue) from \(place)")
        }
        return (count, "counted in \(place)")
    }

    private static func meansRefused(_ error: ShareError) -> Bool {
        [.accessDenied, .notFound, .zoneNotFound].contains(error.code)
    }
}
