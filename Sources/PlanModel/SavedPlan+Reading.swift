import Crypto
import Foundation
import ShareKit

// MARK: - Reading

extension SavedPlan {
    /// Reads a plan from the chunks `next` hands out (nil at the end), `size` bytes in all, checking its
    /// version first, the counts and depths of what it holds before they are used, and its digest (and, with
    /// `key`, its signature) last; `versionAtEnd` gives the file's last bytes, where format 3 kept its version.
    static func decode(
        size: Int, key: SavedPlanKey?, _ next: @escaping () throws -> Data?, versionAtEnd: () throws -> Data
    ) throws -> Contents {
        var lines = SavedPlanLineReader(next: next, key: key)
        let decoder = JSONDecoder()
        guard let first = try lines.next(hashed: false) else { throw Refusal.notSaved }
        let version: SavedPlanVersion
        do {
            version = try decoder.decode(SavedPlanVersion.self, from: Data(first))
        } catch {
            if let old = formatAtEnd(try versionAtEnd()) { throw versionRefusal(old) }
            // A header of this format that Foundation cannot read (nested too deep, cut short) was edited.
            if formatAtEnd(Data(first.prefix(64))) == formatVersion {
                throw Refusal.changed(
                    "line 1, the header, is not a saved plan's: \(SavedPlanLineReader.fault(of: error))")
            }
            throw Refusal.notSaved
        }
        guard version.sharelane_saved_plan == formatVersion else { throw versionRefusal(version.sharelane_saved_plan) }
        lines.hash(first)
        let header: SavedPlanHeader
        do {
            header = try decoder.decode(SavedPlanHeader.self, from: Data(first))
        } catch {
            throw Refusal.changed("line 1, the header, is not a saved plan's: \(SavedPlanLineReader.fault(of: error))")
        }
        // Every zone and change is a line of at least `shortestLine` bytes: a count the rest of the file cannot
        // hold is refused before anything is made for it.
        let rest = max(0, size - first.count - 1)
        for (count, what) in [(header.zones, "zones"), (header.changes, "changes")] {
            guard count >= 0 else {
                throw Refusal.changed("line 1 says \(count) \(what) follow, and a count is never negative")
            }
            guard count <= rest / shortestLine else {
                throw Refusal.changed(
                    "line 1 says \(count) \(what) follow, more lines than the \(rest) bytes after it can hold")
            }
        }
        guard header.zones + header.changes <= rest / shortestLine else {
            throw Refusal.changed(
                "line 1 says \(header.zones) zones and \(header.changes) changes follow, more lines than the \(rest) bytes after it can hold"
            )
        }
        var zones: [ZoneBasis] = []
        zones.reserveCapacity(min(header.zones, rest / reservedLine))
        for _ in 0..<header.zones { zones.append(try lines.read { try $0.zoneBasis() }) }
        let publicBasis = try lines.read { input in
            let start = input.offset
            try input.skipValue()
            return try decoder.decode(SavedPublicBasis.self, from: input.data(from: start))
        }
        var plan = Plan(
            recipeName: header.recipe, storeName: header.store, owner: header.owner, users: header.users,
            changes: [], notes: header.notes, waiting: header.waiting,
            basis: LiveBasis(
                zones: zones, publicRecordNames: publicBasis.publicRecordNames,
                publicTags: publicBasis.recordChangeTags),
            access: header.access)
        plan.schema = header.schema
        plan.rearm = header.rearm?.map(\.planned)
        plan.assetFiles = header.assetFiles
        plan.container = header.container
        plan.environment = header.environment
        plan.generatedNames = header.generatedNames
        plan.zoneOwners = header.zoneOwners
        plan.changes.reserveCapacity(min(header.changes, rest / reservedLine))
        for _ in 0..<header.changes { plan.changes.append(try lines.read { try $0.change(decoder: decoder) }) }
        let expected = digestText(lines.digest)
        let signature = lines.signature.map(signatureText)
        let digest = try lines.read(hashed: false) { input in
            let start = input.offset
            try input.skipValue()
            return try decoder.decode(SavedPlanDigest.self, from: input.data(from: start))
        }
        guard digest.digest == expected else {
            throw Refusal.changed("its content does not match its digest")
        }
        guard try lines.next(hashed: false) == nil else {
            throw Refusal.changed("it goes on after its digest (line \(lines.number))")
        }
        if let signature {
            guard let signed = digest.signature else {
                throw Refusal(
                    reason:
                        "it is not signed, and \(SavedPlanKey.environmentVariable) is set: only a plan saved by `sharelane plan --out` with the same key set is applied, so nothing was applied"
                )
            }
            guard constantTimeEqual(signed, signature) else {
                throw Refusal(
                    reason:
                        "its signature does not match \(SavedPlanKey.environmentVariable): the file was changed after it was signed, or signed with another key, so nothing was applied"
                )
            }
        }
        return Contents(plan: plan, store: header.storeIdentity, isSigned: digest.signature != nil)
    }

    /// The fewest bytes a zone's or a change's line has, its newline included: `{"zoneName":"","exists":true}`
    /// is 30.
    static let shortestLine = 16

    /// The bytes of file a zone or change is given room for before it is read: a change is 327 bytes on
    /// average in the bench's plan, and a file whose lines are shorter has its arrays grow as they are read.
    private static let reservedLine = 256

    /// Whether two texts are the same, in a time that does not depend on where they differ.
    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// Format 3 and before were one JSON object with sorted keys, `sharelane_saved_plan` last.
    private static func formatAtEnd(_ tail: Data) -> Int? {
        let text = String(decoding: tail, as: UTF8.self)
        guard let key = text.range(of: "\"sharelane_saved_plan\"", options: .backwards) else { return nil }
        let rest = text[key.upperBound...].drop { $0 == " " || $0 == ":" || $0 == "\n" }
        return Int(rest.prefix { $0.isNumber })
    }

    private static func versionRefusal(_ version: Int) -> Refusal {
        let which = version > formatVersion ? "a newer" : "an older"
        let then =
            version > formatVersion
            ? "apply it with that sharelane" : "a saved plan is for the review it was made in, so make it again"
        return Refusal(
            reason:
                "it was saved by \(which) sharelane (format \(version)), and this one reads format \(formatVersion): \(then)"
        )
    }
}
