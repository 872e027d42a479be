import ShareKit

/// Checks what spans the whole recipe: names that must point at declared users, records, shares and lanes,
/// one share per record, and record order (parents before children).
struct RecipeValidator {
    var errors: [RecipeError] = []
    var warnings: [RecipeError] = []
    var handles: [String] = []
    /// `handles` as a set: every participant, actor and subscriber is checked against it, and a scan of the
    /// users for each made a recipe of thousands of users and as many participants quadratic.
    var declaredHandles: Set<String> = []
    /// Users declared with an error in their own entry: that error is reported once, not at every reference.
    var faultyHandles: Set<String> = []
    /// The recipe's variables (`vars:` and every `${NAME}` it writes), which a `lane:` step's `parameters:`
    /// must name; nil leaves them unchecked.
    var variableNames: Set<String>?
    /// The names a running lane sets (`lane`, `lane_error`, `register:`ed values), which no parameter may set,
    /// and of them those a step registers.
    var runtimeNames: Set<String> = []
    var registeredNames: Set<String> = []

    mutating func error(_ message: String, _ location: SourceLocation) {
        errors.append(RecipeError(message, at: location))
    }

    /// Validates `recipe`, reordering each zone's records so parents come first.
    mutating func validate(_ recipe: inout Recipe, decoder: RecipeDecoder) {
        handles = recipe.users.map(\.handle)
        declaredHandles = Set(handles)
        faultyHandles = decoder.faultyUserHandles
        if !recipe.owner.isEmpty, let ownerLocation = decoder.ownerLocation {
            checkUser(recipe.owner, "`owner`", ownerLocation)
        }

        // Records saved by lane steps count as known to later steps and references.
        var savedRecords: [String: Set<String>] = [:]
        for step in allSteps(recipe) {
            if case .save(let zone, let record, _, _, _) = step.action {
                savedRecords[zone, default: []].insert(record)
            }
        }

        var zoneRecords: [String: Set<String>] = [:]
        var zoneNames = Set<String>()
        let checked = checkedRecords(of: recipe.zones, decoder: decoder)
        for zoneIndex in recipe.zones.indices {
            let zone = recipe.zones[zoneIndex]
            if zoneNames.contains(zone.name) {
                error("zone `\(zone.name)` is declared twice", zone.location)
            }
            zoneNames.insert(zone.name)
            recipe.zones[zoneIndex].records = checked[zoneIndex].records
            errors += checked[zoneIndex].errors
            warnings += checked[zoneIndex].warnings
            zoneRecords[zone.name] = Set(zone.records.map(\.name))
            if let owner = zone.owner, let location = zone.ownerLocation { checkUser(owner, "`owner`", location) }
            checkShares(recipe.zones[zoneIndex], owner: recipe.owner(of: zone))
        }
        recipe.publicRecords = checkRecords(recipe.publicRecords, zone: nil, decoder: decoder)
        let publicNames = Set(recipe.publicRecords.map(\.name))
        // Declared and saved records of each zone, built once (a recipe may hold 100,000 references).
        var knownRecords = zoneRecords
        for (zone, names) in savedRecords { knownRecords[zone, default: []].formUnion(names) }

        for reference in decoder.references {
            let zone = reference.zone ?? reference.fromZone
            let known: Set<String>
            let place: String
            if let zone {
                guard zoneNames.contains(zone) || savedRecords[zone] != nil else {
                    error(
                        "reference to `\(reference.recordName)` names zone `\(zone)`, which the recipe does not declare"
                            + Suggestion.hint(for: zone, in: Array(zoneNames)), reference.location)
                    continue
                }
                known = knownRecords[zone, default: []]
                place = "zone `\(zone)`"
            } else {
                known = publicNames
                place = "the public database"
            }
            if !known.contains(reference.recordName) {
                error(
                    "`\(reference.recordName)` names no record in \(place)"
                        + Suggestion.hint(for: reference.recordName, in: Array(known)),
                    reference.location)
            }
        }

        for url in decoder.shareURLs {
            guard let zone = recipe.zone(url.zone) else {
                error(
                    "`!share-url \(url.zone)` names no declared zone"
                        + Suggestion.hint(for: url.zone, in: Array(zoneNames)), url.location)
                continue
            }
            // The apply writes each owner's zones as that owner, one owner after another: a share URL is known
            // to the writes of the owner who makes the share.
            let holder = url.fromZone.map(recipe.owner(ofZone:)) ?? recipe.owner
            if recipe.owner(of: zone) != holder {
                error(
                    "`!share-url \(url.zone)` names a share in \(recipe.owner(of: zone))'s zone, but the field is in "
                        + (url.fromZone.map { "\(holder)'s zone `\($0)`" }
                            ?? "the public database, which \(holder)'s recipe writes")
                        + "; a `!share-url` names a share of the same owner's zones (a lane step can save it: "
                        + "`save: { …, fields: { link: \"${share_url:\(url.zone)}\" } }`)", url.location)
                continue
            }
            if let recordName = url.record {
                guard let record = zone.records.first(where: { $0.name == recordName }) else {
                    error(
                        "`!share-url \(url.zone)/\(recordName)` names no record of zone `\(url.zone)`"
                            + Suggestion.hint(for: recordName, in: zone.records.map(\.name)), url.location)
                    continue
                }
                guard case .share = record.share else {
                    error(
                        "`!share-url \(url.zone)/\(recordName)`: record `\(recordName)` declares no share", url.location
                    )
                    continue
                }
            } else {
                guard case .share = zone.share else {
                    error(
                        "`!share-url \(url.zone)`: zone `\(url.zone)` declares no zone-wide share (name a shared record as `ZONE/RECORD`)",
                        url.location)
                    continue
                }
            }
        }

        checkLanes(recipe, zoneNames: zoneNames, knownRecords: knownRecords, savedRecords: savedRecords)
        warnKeywordZones(recipe)
    }

    /// A zone named `records` or `share` is most often a key indented one level too little, under `zones:`
    /// instead of under its zone: said as a warning (CloudKit would take the name).
    private mutating func warnKeywordZones(_ recipe: Recipe) {
        let keywords = Set(RecipeDecoder.zoneKeys + RecipeDecoder.recordKeys)
        for zone in recipe.zones where keywords.contains(zone.name) {
            var warning = RecipeError(
                "zone `\(zone.name)` has the name of a recipe key: if `\(zone.name):` belongs to the zone above it, "
                    + "indent it under that zone's name; if it is a zone, this warning can be ignored",
                at: zone.location)
            warning.isWarning = true
            warnings.append(warning)
        }
    }

    mutating func checkUser(_ handle: String, _ what: String, _ location: SourceLocation) {
        guard !declaredHandles.contains(handle), !faultyHandles.contains(handle) else { return }
        error(
            "\(what) `\(handle)` names no user" + Suggestion.hint(for: handle, in: handles)
                + "; users are declared under `users:`", location)
    }

    func allSteps(_ recipe: Recipe) -> [Step] {
        recipe.lanes.flatMap(\.steps) + recipe.beforeAll + recipe.afterAll + recipe.onError + recipe.beforeEach
            + recipe.afterEach
    }

    /// Each zone's records checked (`checkRecords`), with what was found in each, in zone order. Zones are
    /// checked on every core when there are many, each by a validator of its own.
    private func checkedRecords(of zones: [DeclaredZone], decoder: RecipeDecoder) -> [(
        records: [DeclaredRecord], errors: [RecipeError], warnings: [RecipeError]
    )] {
        let parts = OnEveryCore.parts(of: zones.count, atLeast: OnEveryCore.zonesPerPart)
        return OnEveryCore.map(parts.count) { part in
            parts[part].map { index in
                var validator = self
                validator.errors = []
                validator.warnings = []
                let records = validator.checkRecords(zones[index].records, zone: zones[index].name, decoder: decoder)
                return (records, validator.errors, validator.warnings)
            }
        }.flatMap { $0 }
    }

    /// Duplicate names, parents that name nothing, parent cycles; returns the records with parents first.
    private mutating func checkRecords(_ records: [DeclaredRecord], zone: String?, decoder: RecipeDecoder)
        -> [DeclaredRecord]
    {
        let place = zone.map { "zone `\($0)`" } ?? "the public database"
        var byName: [String: Int] = [:]
        for (i, record) in records.enumerated() {
            if let first = byName[record.name] {
                error(
                    "record `\(record.name)` is declared twice in \(place) (first at \(records[first].location))",
                    record.location)
            } else {
                byName[record.name] = i
            }
        }
        for record in records where !record.absent {
            var size = 0
            for (name, declared) in record.fields {
                if case .value(let value) = declared { size += name.utf8.count + CloudKitLimits.size(of: value) }
            }
            if let problem = CloudKitLimits.recordSizeProblem(size) {
                error("record `\(record.name)` \(problem) (`!asset`)", record.location)
            }
        }
        var parentOK = [Bool](repeating: true, count: records.count)
        for (i, record) in records.enumerated() {
            guard let parent = record.parent else { continue }
            if byName[parent] == nil {
                let location = decoder.parentLocations[(zone ?? "") + "\u{0}" + record.name] ?? record.location
                error(
                    "parent `\(parent)` of record `\(record.name)` names no record in \(place)"
                        + Suggestion.hint(for: parent, in: Array(byName.keys)), location)
                parentOK[i] = false
            }
        }
        // Parents before children: a stable depth-first order that also finds cycles.
        var children: [String: [Int]] = [:]
        var roots: [Int] = []
        for (i, record) in records.enumerated() {
            if let parent = record.parent, parentOK[i], byName[parent] != nil, byName[record.name] == i {
                children[parent, default: []].append(i)
            } else {
                roots.append(i)
            }
        }
        var ordered: [DeclaredRecord] = []
        ordered.reserveCapacity(records.count)
        var placed = [Bool](repeating: false, count: records.count)
        var stack: [Int] = []
        for root in roots.reversed() { stack.append(root) }
        while let i = stack.popLast() {
            if placed[i] { continue }
            placed[i] = true
            ordered.append(records[i])
            if byName[records[i].name] == i, let kids = children[records[i].name] {
                for kid in kids.reversed() { stack.append(kid) }
            }
        }
        var inParentCycle = false
        for (i, record) in records.enumerated() where !placed[i] {
            error(
                "record `\(record.name)` is in a parent cycle (its `parent:` chain leads back to itself)",
                decoder.parentLocations[(zone ?? "") + "\u{0}" + record.name] ?? record.location)
            ordered.append(record)
            inParentCycle = true
        }
        if !inParentCycle { checkWriteOrder(ordered, zone: zone, byName: byName) }
        return ordered
    }

    /// A record is written after its parent and after the targets of its `VALIDATE` references: those must
    /// not form a cycle (`r1` validating its own child `r2`, or two records validating each other), which no
    /// order of writes can satisfy and CloudKit refuses.
    private mutating func checkWriteOrder(_ records: [DeclaredRecord], zone: String?, byName: [String: Int]) {
        let zoneName = zone ?? "_defaultZone"
        var needs: [String: [String]] = [:]
        var anyValidate = false
        for record in records where !record.absent {
            var names = record.parent.map { [$0] } ?? []
            for value in record.fields.values {
                guard case .value(let v) = value else { continue }
                let targets = v.referencedRecordNames(action: .validate, inZone: zoneName)
                if !targets.isEmpty { anyValidate = true }
                names += targets.filter { $0 != record.name && byName[$0] != nil }
            }
            needs[record.name] = names
        }
        guard anyValidate else { return }
        var state: [String: UInt8] = [:]  // 1 on the path, 2 done
        var reported = Set<String>()
        for record in records where state[record.name] == nil {
            // Iterative depth-first search: a deep hierarchy must not overflow the stack.
            var stack: [(name: String, next: Int)] = [(record.name, 0)]
            state[record.name] = 1
            while let top = stack.last {
                let edges = needs[top.name] ?? []
                if top.next < edges.count {
                    stack[stack.count - 1].next += 1
                    let target = edges[top.next]
                    switch state[target] {
                    case nil:
                        state[target] = 1
                        stack.append((target, 0))
                    case 1:
                        let cycle = stack.map(\.name).drop { $0 != target } + [target]
                        if reported.insert(target).inserted, let first = byName[target] {
                            error(
                                "records \(cycle.map { "`\($0)`" }.joined(separator: " → ")) each need the next one written first "
                                    + "(a parent, or the target of a `VALIDATE` reference), which no order of writes can do; "
                                    + "make one of the references `action: none` or `delete-self`",
                                records.first { $0.name == target }?.location ?? records[first].location)
                        }
                    default:
                        break
                    }
                } else {
                    state[top.name] = 2
                    stack.removeLast()
                }
            }
        }
    }

    /// Participants name users (not the owner), and a record takes part in at most one share.
    private mutating func checkShares(_ zone: DeclaredZone, owner: String) {
        func checkParticipants(_ share: DeclaredShare) {
            // Keys written differently can name one person once variables are substituted
            // (`"${viewer}": read-only` beside `b: read-write`): the plan would add them twice, the apply keep one.
            var seen: [String: SourceLocation] = [:]
            for participant in share.participants {
                if let first = seen[participant.handle] {
                    error(
                        "`\(participant.handle)` is a participant of this share twice (also at "
                            + (first.file == participant.location.file ? "line \(first.line)" : "\(first)")
                            + "), once variables are substituted; give each person one entry", participant.location)
                } else {
                    seen[participant.handle] = participant.location
                }
                checkUser(participant.handle, "participant", participant.location)
                if participant.handle == owner {
                    error("`\(owner)` owns the share and cannot also be a participant", participant.location)
                }
            }
        }
        var zoneShared = false
        if case .share(let share) = zone.share {
            zoneShared = true
            checkParticipants(share)
        }
        var parentOf: [String: String] = [:]
        var sharedRoots: [String: SourceLocation] = [:]
        for record in zone.records {
            if let parent = record.parent { parentOf[record.name] = parent }
            if case .share(let share) = record.share {
                sharedRoots[record.name] = share.location
                checkParticipants(share)
            }
        }
        for record in zone.records {
            guard case .share(let share) = record.share else { continue }
            if zoneShared {
                error(
                    "record `\(record.name)` is in two shares: zone `\(zone.name)` is shared as a whole, so it cannot also share this record (a record takes part in one share)",
                    share.location)
                continue
            }
            var ancestor = record.parent
            var seen: Set<String> = [record.name]
            while let a = ancestor, !seen.contains(a) {
                seen.insert(a)
                if sharedRoots[a] != nil {
                    error(
                        "record `\(record.name)` is in two shares: its ancestor `\(a)` roots a share that already holds it (a record takes part in one share)",
                        share.location)
                    break
                }
                ancestor = parentOf[a]
            }
        }
    }

}
