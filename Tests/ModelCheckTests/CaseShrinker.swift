/// Makes a failing case smaller while it still breaks the same invariant: fewer actions first, then a
/// smaller recipe (fewer zones, records, fields, participants, users, public records, subscriptions).
struct CaseShrinker {
    /// Runs a case and answers its violation, if any.
    let run: (CheckCase) async throws -> Violation?
    /// At most this many runs.
    var budget = 250

    func shrink(_ start: CheckCase, _ violation: Violation) async throws -> (CheckCase, Violation, runs: Int) {
        var best = start
        var bestViolation = violation
        var runs = 0
        func attempt(_ candidate: CheckCase) async throws -> Bool {
            guard runs < budget, candidate != best else { return false }
            runs += 1
            guard let found = try await run(candidate), found.signature == bestViolation.signature else { return false }
            best = candidate
            bestViolation = found
            return true
        }
        // Actions after the failing one never matter.
        if violation.step >= 0, violation.step + 1 < best.actions.count {
            var cut = best
            cut.actions = Array(best.actions.prefix(violation.step + 1))
            _ = try await attempt(cut)
        }
        var improved = true
        while improved && runs < budget {
            improved = false
            var chunk = max(1, best.actions.count / 2)
            while chunk >= 1 {
                var start = 0
                while start < best.actions.count {
                    var candidate = best
                    candidate.actions.removeSubrange(start..<min(start + chunk, best.actions.count))
                    if try await attempt(candidate) { improved = true } else { start += chunk }
                }
                chunk /= 2
            }
            // A recipe edit often only stands for "apply again": try the plain apply.
            for (index, action) in best.actions.enumerated() {
                guard case .mutate(_, let prune) = action else { continue }
                var candidate = best
                candidate.actions[index] = .apply(prune: prune)
                if try await attempt(candidate) { improved = true }
            }
            for smaller in Self.smallerRecipes(best.recipe) {
                var candidate = best
                candidate.recipe = smaller
                if try await attempt(candidate) {
                    improved = true
                    break
                }
            }
        }
        return (best, bestViolation, runs)
    }

    /// Recipes one step smaller than `spec`; a candidate the loader refuses is simply not a failure.
    static func smallerRecipes(_ spec: RecipeSpec) -> [RecipeSpec] {
        var result: [RecipeSpec] = []
        for index in spec.zones.indices {
            var s = spec
            let removed = s.zones.remove(at: index)
            s.subscriptions.removeAll { $0.zone == removed.name }
            result.append(s)
        }
        for index in spec.publicRecords.indices {
            var s = spec
            s.publicRecords.remove(at: index)
            result.append(s)
        }
        for index in spec.subscriptions.indices {
            var s = spec
            s.subscriptions.remove(at: index)
            result.append(s)
        }
        // A user who owns a zone stays; that zone may become the recipe owner's (below).
        if spec.users.count > 2, let last = spec.users.last, !spec.zones.contains(where: { $0.owner == last }) {
            var s = spec
            s.users.removeLast()
            s.subscriptions.removeAll { $0.user == last }
            for z in s.zones.indices {
                Self.editShares(in: &s.zones[z]) { $0.participants.removeAll { $0.handle == last } }
            }
            result.append(s)
        }
        for zone in spec.zones {
            for (record, _) in spec.records(in: zone.name) {
                var s = spec
                s.removeRecord(record.name, in: zone.name)
                result.append(s)
            }
            if let z = spec.zones.firstIndex(where: { $0.name == zone.name }) {
                if let owner = zone.owner {
                    // The zone becomes the recipe owner's, whose shares it may not take part in.
                    var s = spec
                    s.zones[z].owner = nil
                    let recipeOwner = spec.owner
                    Self.editShares(in: &s.zones[z]) { $0.participants.removeAll { $0.handle == recipeOwner } }
                    s.subscriptions.removeAll { $0.zone == zone.name && $0.user == owner }
                    result.append(s)
                }
                if zone.share != .unset {
                    var s = spec
                    s.zones[z].share = .unset
                    result.append(s)
                }
                if zone.prune {
                    var s = spec
                    s.zones[z].prune = false
                    result.append(s)
                }
                if let g = zone.records.firstIndex(where: { $0.repeatCount != nil }) {
                    var s = spec
                    s.zones[z].records.remove(at: g)
                    result.append(s)
                }
            }
            for (record, _) in spec.records(in: zone.name) {
                if record.share != .unset {
                    var s = spec
                    s.updateRecord(record.name, in: zone.name) { $0.share = .unset }
                    result.append(s)
                }
                if case .share(let share) = record.share {
                    for p in share.participants {
                        var s = spec
                        s.updateRecord(record.name, in: zone.name) { r in
                            var smaller = share
                            smaller.participants.removeAll { $0.handle == p.handle }
                            r.share = .share(smaller)
                        }
                        result.append(s)
                    }
                }
                for field in record.fields {
                    var s = spec
                    s.updateRecord(record.name, in: zone.name) { $0.fields.removeAll { $0.name == field.name } }
                    result.append(s)
                }
            }
            if case .share(let share) = zone.share, let z = spec.zones.firstIndex(where: { $0.name == zone.name }) {
                for p in share.participants {
                    var s = spec
                    var smaller = share
                    smaller.participants.removeAll { $0.handle == p.handle }
                    s.zones[z].share = .share(smaller)
                    result.append(s)
                }
            }
        }
        return result
    }

    private static func editShares(in zone: inout ZoneSpec, _ change: (inout ShareSpec) -> Void) {
        if case .share(var share) = zone.share {
            change(&share)
            zone.share = .share(share)
        }
        func walk(_ records: inout [RecordSpec]) {
            for i in records.indices {
                if case .share(var share) = records[i].share {
                    change(&share)
                    records[i].share = .share(share)
                }
                walk(&records[i].children)
            }
        }
        walk(&zone.records)
    }
}
