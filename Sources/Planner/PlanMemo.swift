import Crypto
import Foundation
import Recipe
import ShareKit

/// What a `PlanCache` file holds: the store's change token from before the last plan read its zones, and
/// for each zone that planned to no changes, what its plan depended on and what it took from the store.
struct PlanMemo: Sendable, Codable {
    static let currentVersion = 1

    /// One zone that planned to no changes.
    struct Zone: Sendable, Codable {
        /// The digest of what the zone's plan depended on (`PlanMemo.digest`).
        var digest: String
        var exists: Bool
        /// The change tags the plan's basis holds for the zone.
        var tags: [String: String]
        /// The zone's live shares (for the plan's access before and after).
        var shares: [Share]
        /// The notes and waiting lines the zone's plan gave.
        var notes: [String]
        var waiting: [String]
    }

    var version: Int
    var storeName: String
    var owner: UserRecordName
    var databaseToken: ChangeToken
    var zones: [String: Zone]

    /// The memo in `file`, when there is one for this store and owner in this version; nil otherwise.
    static func load(_ file: URL, storeName: String, owner: UserRecordName) -> PlanMemo? {
        guard let data = try? Data(contentsOf: file),
            let memo = try? JSONDecoder().decode(PlanMemo.self, from: data),
            memo.version == currentVersion, memo.storeName == storeName, memo.owner == owner
        else { return nil }
        return memo
    }

    /// Writes the memo to `file` (replacing it whole, so a reader sees the old one or the new one); a file
    /// that cannot be written only costs the next plan a full read.
    func save(to file: URL) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? data.write(to: file, options: .atomic)
    }

    /// A digest of everything a zone's plan depends on besides the live zone: the declared zone, the users
    /// and their record names, the owner, container and seed (a stable share URL is derived from them), and
    /// the options. Written field by field in a fixed order, dictionaries sorted, so it is the same in every
    /// process.
    static func digest(
        of zone: DeclaredZone, recipe: Recipe, users: UserDirectory, prune: Bool, destroy: Bool, actsAsAnyUser: Bool
    ) -> String {
        var hasher = SHA256()
        func feed(_ parts: String...) {
            for part in parts {
                hasher.update(data: Data(part.utf8))
                hasher.update(data: Data([0]))
            }
        }
        feed(
            "v1", recipe.container, users.owner.email, String(recipe.seed), "\(prune)", "\(destroy)", "\(actsAsAnyUser)"
        )
        for entry in users.entries {
            feed(entry.handle, entry.email, entry.name ?? "", entry.recordName ?? "")
        }
        feed(zone.name, "\(zone.prune)", "\(zone.absent)", String(describing: zone.share))
        for record in zone.records {
            feed(
                record.name, record.type, record.parent ?? "", "\(record.absent)", String(describing: record.share))
            for key in record.fields.keys.sorted() {
                // The common values spelled directly; the others by their description (which holds no
                // dictionary, so it is the same in every process).
                switch record.fields[key] {
                case .value(.string(let text))?: feed(key, "s", text)
                case .value(.int64(let number))?: feed(key, "i", String(number))
                case .value(.double(let number))?: feed(key, "d", String(number))
                case let other: feed(key, String(describing: other))
                }
            }
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
