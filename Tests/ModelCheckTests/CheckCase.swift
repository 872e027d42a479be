import ShareKit

/// A recipe and the actions run against it: what a seed generates and what the shrinker makes smaller.
struct CheckCase: Hashable, Sendable {
    var seed: UInt64
    var recipe: RecipeSpec
    var actions: [CheckAction]

    /// The containers a case may run in, in development: each store keeps both, and production of each,
    /// beside the case's, and what the case does must not reach them (`CaseRunner.checkWorldsApart`).
    static let containers = ["iCloud.local.sharelane", "iCloud.com.example.Other"]
    /// Every world a side keeps during a run: both containers, both environments.
    static let worlds = containers.flatMap { container in
        CloudKitEnvironment.allCases.map { StoreWorld(container: container, environment: $0) }
    }

    /// The world the case runs in: drawn from the seed apart from the generator's stream, so that a seed's
    /// recipe and actions are what they were before containers were drawn.
    var world: StoreWorld {
        StoreWorld(
            container: Self.containers[Int((seed >> 17) % UInt64(Self.containers.count))], environment: .development)
    }

    /// The case a seed stands for.
    static func generate(seed: UInt64, bugs: KnownBugs) -> CheckCase {
        var generator = RecipeGenerator(random: CheckRandom(seed: seed), bugs: bugs)
        var recipe = generator.recipe()
        // A recipe whose records need each other written first is invalid input (the loader says so, tested
        // with the invalid recipes): draw again, a few times, from the same random stream.
        for _ in 0..<20 where Self.hasWriteOrderCycle(recipe) {
            generator.continueNumbering(after: recipe)
            recipe = generator.recipe()
        }
        var current = recipe
        var actions: [CheckAction] = []
        if !bugs.planBeforeFirstApply && generator.random.chance(0.15) { actions.append(.plan) }
        // Now and then the first apply is stopped part-way, as a user who saw a wrong plan scroll by stops it:
        // it creates the recipe's users, and those it did not are new to the apply after it.
        actions.append(generator.random.chance(0.2) ? stoppedApply(&generator, mutation: nil) : .apply(prune: false))
        for _ in 0..<generator.random.int(2...9) {
            if let action = nextAction(&generator, current: &current, bugs: bugs) { actions.append(action) }
        }
        return CheckCase(seed: seed, recipe: recipe, actions: actions)
    }

    static func hasWriteOrderCycle(_ recipe: RecipeSpec) -> Bool {
        do {
            _ = try CaseRunner.load(recipe.yaml())
            return false
        } catch {
            return "\(error)".contains(RecipeGenerator.writeOrderCycle)
        }
    }

    private static func nextAction(_ g: inout RecipeGenerator, current spec: inout RecipeSpec, bugs: KnownBugs)
        -> CheckAction?
    {
        let zones = spec.zones.filter { !$0.absent }.map(\.name)
        let shares = spec.declaredShares
        var records: [(zone: String, name: String)] = []
        var deletable: [(zone: String, name: String)] = []
        for zone in zones {
            let referenced = spec.referencedNames(in: zone)
            for (record, _) in spec.records(in: zone) where !record.absent {
                records.append((zone, record.name))
                if !bugs.exportOfDanglingParentOrReference
                    || (record.children.isEmpty && !referenced.contains(record.name))
                {
                    deletable.append((zone, record.name))
                }
            }
        }
        switch g.random.int(0...99) {
        case 0..<8: return .apply(prune: g.random.chance(0.3))
        case 8..<13: return .plan
        case 13..<27:
            guard let share = g.random.maybePick(shares),
                let user = g.random.maybePick(spec.participants(ofZone: share.zone))
            else {
                return nil
            }
            return .accept(user: user, zone: share.zone, root: share.root)
        case 27..<34:
            guard !bugs.participantLeaves, let share = g.random.maybePick(shares),
                let user = g.random.maybePick(spec.participants(ofZone: share.zone))
            else { return nil }
            return .leave(user: user, zone: share.zone, root: share.root)
        case 34..<38:
            guard !bugs.deletedShareIsNotRecreated, let share = g.random.maybePick(shares) else { return nil }
            return .stopSharing(zone: share.zone, root: share.root)
        case 38..<54:
            // A participant writes inside or outside what is shared with it: an existing record, or a new one
            // under a record or at the top of the zone.
            guard let zone = g.random.maybePick(zones), let user = g.random.maybePick(spec.participants(ofZone: zone))
            else {
                return nil
            }
            let inZone = records.filter { $0.zone == zone }.map(\.name)
            if let existing = g.random.maybePick(inZone), g.random.chance(0.5) {
                return .save(
                    user: user, zone: zone, record: existing, parent: nil, field: "note", value: .string("by-\(user)"))
            }
            let parent = g.random.chance(0.7) ? g.random.maybePick(inZone) : nil
            return .save(
                user: user, zone: zone, record: "p\(g.random.int(1...99))", parent: parent, field: "count",
                value: .int64(Int64(g.random.int(0...99))))
        case 54..<62:
            guard let record = g.random.maybePick(deletable),
                let user = g.random.maybePick(spec.participants(ofZone: record.zone))
            else {
                return nil
            }
            return .delete(user: user, zone: record.zone, record: record.name)
        case 62..<70:
            guard let record = g.random.maybePick(records) else { return nil }
            let field = g.random.chance(0.5) ? FieldSpecValue.string("").fieldName : "edited"
            return .save(
                user: spec.owner(ofZone: record.zone), zone: record.zone, record: record.name, parent: nil,
                field: field,
                value: .string("edit-\(g.random.int(1...99))"))
        case 70..<75:
            let roots = Set(shares.compactMap { $0.root })
            let candidates = bugs.deletedShareIsNotRecreated ? deletable.filter { !roots.contains($0.name) } : deletable
            guard let record = g.random.maybePick(candidates) else { return nil }
            return .delete(user: spec.owner(ofZone: record.zone), zone: record.zone, record: record.name)
        case 75..<88:
            guard let mutation = mutation(&g, spec: spec, bugs: bugs), mutation.apply(to: &spec) else { return nil }
            return .mutate(mutation, prune: g.random.chance(0.25))
        case 88..<92:
            // An edit, so that the stopped apply has something to do.
            guard let mutation = mutation(&g, spec: spec, bugs: bugs), mutation.apply(to: &spec) else { return nil }
            return stoppedApply(&g, mutation: mutation)
        case 92..<96:
            guard let record = g.random.maybePick(records) else { return nil }
            return .stalePlan(zone: record.zone, record: record.name)
        default:
            return .export
        }
    }

    /// An apply stopped at a random point, by SIGKILL or Ctrl-C, then up to two random steps.
    static func stoppedApply(_ g: inout RecipeGenerator, mutation: RecipeMutation?) -> CheckAction {
        var then: [CheckAction.AfterStop] = []
        for _ in 0..<g.random.int(0...2) {
            switch g.random.int(0...3) {
            case 0: then.append(.plan)
            case 1: then.append(.lane)
            case 2: then.append(.savedPlan)
            default: then.append(.stoppedApply(after: g.random.int(0...3), kill: g.random.chance(0.5)))
            }
        }
        return .stoppedApply(mutation, after: g.random.int(0...3), kill: g.random.chance(0.5), then: then)
    }

    static func mutation(_ g: inout RecipeGenerator, spec: RecipeSpec, bugs: KnownBugs) -> RecipeMutation? {
        g.continueNumbering(after: spec)
        let zones = spec.zones.filter { !$0.absent }.map(\.name)
        guard let zone = g.random.maybePick(zones) else { return nil }
        let records = spec.records(in: zone).filter { !$0.record.absent }
        let others = records.map(\.record.name)
        let shares = spec.declaredShares.filter { $0.zone == zone }
        switch g.random.int(0...12) {
        case 0, 1:
            guard let record = g.random.maybePick(records) else { return nil }
            let value = g.value(earlier: [], others: others.filter { $0 != record.record.name })
            let field = FieldSpec(name: value.fieldName, value: value)
            return .setField(zone: zone, record: record.record.name, field)
        case 2, 3:
            let parent = g.random.chance(0.5) ? g.random.maybePick(others) : nil
            let record = RecordSpec(
                name: g.newRecordName(), type: g.random.pick(RecipeGenerator.types),
                fields: g.fields(earlier: others, others: others))
            return .addRecord(zone: zone, parent: parent, record)
        case 4:
            guard let record = g.random.maybePick(others) else { return nil }
            return .removeRecord(zone: zone, record: record)
        case 5:
            guard let record = g.random.maybePick(others) else { return nil }
            return .markAbsent(zone: zone, record: record)
        case 6:
            guard let share = g.random.maybePick(shares), let p = g.random.maybePick(share.share.participants) else {
                return nil
            }
            var permission: Permission = p.permission == .readOnly ? .readWrite : .readOnly
            if p.administrator { permission = .readWrite }  // an administrator is read-write
            return .setPermission(zone: zone, root: share.root, user: p.handle, permission)
        case 7:
            guard let share = g.random.maybePick(shares), let user = g.random.maybePick(spec.participants(ofZone: zone))
            else {
                return nil
            }
            return .addParticipant(zone: zone, root: share.root, g.participant(user))
        case 8:
            guard let share = g.random.maybePick(shares), let p = g.random.maybePick(share.share.participants) else {
                return nil
            }
            return .removeParticipant(zone: zone, root: share.root, user: p.handle)
        case 9:
            guard let share = g.random.maybePick(shares) else { return nil }
            if share.share.participants.isEmpty {
                return .setPublicPermission(zone: zone, root: share.root, g.random.pick(Permission.allCases))
            }
            return .shareNone(zone: zone, root: share.root)
        case 10:
            guard let share = g.random.maybePick(shares.filter { $0.root != nil }), let root = share.root else {
                return nil
            }
            let children = records.filter { $0.parent == root }.map(\.record.name)
            if !bugs.shareNoneWithAbsentChild, let child = g.random.maybePick(children) {
                return .shareNoneAndAbsentChild(zone: zone, root: root, child: child)
            }
            return .shareNone(zone: zone, root: root)
        case 11:
            return g.random.chance(0.3) ? .markZoneAbsent(zone: zone) : nil
        default:
            // Half the time one the recipe declares (stop declaring it), else a new one.
            if let declared = g.random.maybePick(spec.subscriptions), g.random.chance(0.5) {
                return .toggleSubscription(declared)
            }
            return .toggleSubscription(g.subscription(in: spec))
        }
    }
}
