import ShareKit
import PlanModel

/// What an apply wrote in the zones its plan asked about (`AfterApply.reportedZones`): the change tags of the
/// records and shares it saved, packed as `ChangeTags` lines (100,000 records cost about 2 MB, not the 10 of a
/// dictionary), and the names it deleted.
package struct WrittenTags: Sendable {
    private var saved: [String: String] = [:]
    private var deleted: [String: Set<String>] = [:]
    /// Zones where a name could not be packed (a tab or newline in it): their tags are not known.
    private var unknown: Set<String> = []
    /// Each accepted share, by zone and record name.
    private var acceptances: [String: [String: Acceptance]] = [:]

    /// A share's acceptances in this run: the store calls that made them, the tags their answers gave, and
    /// the participants who accepted.
    private struct Acceptance: Sendable {
        var calls: Set<Int> = []
        var tags: Set<String> = []
        var users: Set<UserRecordName> = []
    }

    mutating func saved(_ name: String, tag: String?, zone: String) {
        let tag = tag ?? ""
        guard !name.breaksTabbedLines, !tag.breaksTabbedLines else {
            unknown.insert(zone)
            return
        }
        saved[zone, default: ""] += "\(name)\t\(tag)\n"
    }

    /// A share's tag after `user` accepted it in the store call numbered `call`.
    mutating func accepted(_ name: String, tag: String?, zone: String, by user: UserRecordName, call: Int) {
        var acceptance = acceptances[zone, default: [:]][name, default: Acceptance()]
        acceptance.calls.insert(call)
        acceptance.tags.insert(tag ?? "")
        acceptance.users.insert(user)
        acceptances[zone, default: [:]][name] = acceptance
        if acceptance.calls.count == 1 { saved(name, tag: tag, zone: zone) }
    }

    /// Whether this run's writes in `zone` left tags it knows.
    package func knows(_ zone: String) -> Bool { !unknown.contains(zone) }

    mutating func deleted(_ name: String, zone: String) {
        deleted[zone, default: []].insert(name)
    }

    /// The tags of `zone` after this run's writes, starting from `tags`, as the store holds it `now`; nil
    /// when they are not known. A zone's deletions come before its saves in an apply, and a later save of a
    /// name wins over an earlier one.
    ///
    /// A share accepted in several calls at once (several participants' requests over `http:`) was written
    /// last by whichever the store ran last, which the order of the answers does not tell: its tag is the
    /// one the store holds `now` when that is one of this run's acceptances' tags and every participant this
    /// run accepted shows accepted there. Nothing else then wrote the share after this run's last acceptance,
    /// as a record's tag tells of a record.
    package func tags(in zone: String, from tags: [String: String], now: ZoneTags) -> [String: String]? {
        guard !unknown.contains(zone), let written = ChangeTags(packed: saved[zone] ?? "") else { return nil }
        var tags = tags
        for name in deleted[zone] ?? [] { tags[name] = nil }
        written.merge(into: &tags)
        for (name, acceptance) in acceptances[zone] ?? [:] where acceptance.calls.count > 1 {
            guard let share = now.shares.first(where: { $0.recordName == name }),
                acceptance.tags.contains(share.changeTag ?? ""),
                acceptance.users.isSubset(
                    of: share.participants.lazy.filter { $0.acceptance == .accepted }.map(\.userRecordName))
            else { return nil }
            tags[name] = share.changeTag ?? ""
        }
        return tags
    }
}
