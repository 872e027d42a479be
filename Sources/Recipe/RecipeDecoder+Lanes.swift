import ShareKit

extension RecipeDecoder {
    static let laneKeys = ["desc", "private", "ci", "steps"]
    static let actionNames = [
        "plan", "apply", "accept", "leave", "remove", "permission", "save", "delete", "expect", "export", "reset",
        "lane", "query", "deploy_schema", "subscribe", "sh",
    ]
    /// Actions that may be written bare (`- apply`).
    static let bareActions = ["plan", "apply", "export", "reset", "deploy_schema"]
    static let actionKeys: [String: [String]] = [
        "plan": ["as", "prune", "only", "environment", "name"],
        "apply": ["as", "prune", "only", "environment", "name"],
        "accept": ["as", "zone", "record", "url", "expect_error", "name"],
        "leave": ["as", "zone", "record", "expect_error", "name"],
        "remove": ["as", "zone", "record", "participant", "expect_error", "name"],
        "permission": ["as", "zone", "record", "participant", "to", "expect_error", "name"],
        "save": ["as", "zone", "record", "type", "parent", "fields", "expect_error", "environment", "name"],
        "delete": ["as", "zone", "record", "expect_error", "environment", "name"],
        "query": [
            "as", "database", "zone", "type", "filter", "sort", "limit", "expect", "expect_error", "environment",
            "within", "name",
        ],
        "deploy_schema": ["as", "name"],
        "subscribe": [
            "as", "id", "database", "type", "zone", "record_type", "fires_on", "fires_once", "alert", "name",
        ],
        "expect": [
            "as", "database", "can", "zone", "record", "to_be", "records", "field", "notified", "within", "name",
        ],
        "sh": ["run", "dir", "env", "timeout", "allow_failure", "register", "name"],
        "export": ["as", "out", "zones", "name"],
        "reset": ["as", "name"],
        "lane": ["as", "name", "parameters"],
    ]
    static let fieldExpectationKeys = ["zone", "record", "name", "equals"]

    func decodeLane(_ pair: RecipePair) -> Lane? {
        let name = pair.key
        guard Self.isHandle(name) else {
            error("`\(name)` is not a lane name; use letters, digits, `-`, `_` and `.`", pair.keyLocation)
            return nil
        }
        if pair.value.items != nil {
            return Lane(name: name, steps: decodeSteps(pair.value, "lane `\(name)`"), location: pair.keyLocation)
        }
        guard let fields = pairs(pair.value, "lane `\(name)`") else { return nil }
        checkKeys(fields, allowed: Self.laneKeys, in: "lane `\(name)`")
        var lane = Lane(name: name, steps: [], location: pair.keyLocation)
        lane.desc = pair.value["desc"].flatMap { string($0, "`desc`") }
        if let p = pair.value["private"] { lane.isPrivate = bool(p, "`private`") ?? false }
        if let ci = pair.value["ci"] { lane.ci = bool(ci, "`ci`") }
        if let steps = pair.value["steps"] {
            lane.steps = decodeSteps(steps, "lane `\(name)`")
        } else {
            error("lane `\(name)` needs `steps:`", pair.keyLocation)
        }
        return lane
    }

    func decodeSteps(_ node: RecipeNode, _ what: String) -> [Step] {
        if case .scalar(let s, true) = node.content, ScalarResolver.isNull(s) { return [] }
        guard let items = node.items else {
            error("the steps of \(what) must be a list, such as `- apply`", node.location)
            return []
        }
        return items.compactMap(decodeStep)
    }

    private func unknownAction(_ word: String, _ location: SourceLocation) {
        let outside = OutsideActions.found(recipeDirectory: rootDirectory).map(\.name)
        error(
            "unknown action `\(word)`" + Suggestion.hint(for: word, in: Self.actionNames + outside)
                + "; actions are " + Self.actionNames.map { "`\($0)`" }.joined(separator: ", ")
                + (outside.isEmpty
                    ? ", or an executable `sharelane-\(word)` on PATH or in the recipe's `actions/` folder"
                    : ", and from outside " + outside.map { "`\($0)`" }.joined(separator: ", ")),
            location)
    }

    func decodeStep(_ node: RecipeNode) -> Step? {
        switch node.content {
        case .scalar(let word, _):
            guard Self.actionNames.contains(word) else {
                if OutsideActions.executable(named: word, recipeDirectory: rootDirectory) != nil {
                    return Step(
                        action: .outside(OutsideAction(name: word, parameters: .object([:]))), location: node.location)
                }
                unknownAction(word, node.location)
                return nil
            }
            guard Self.bareActions.contains(word) else {
                error(
                    "`\(word)` needs arguments, such as `- \(word): { \(Self.actionKeys[word]?.dropFirst().prefix(2).map { "\($0): …" }.joined(separator: ", ") ?? "") }`",
                    node.location)
                return nil
            }
            return decodeAction(word, arguments: nil, at: node.location)
        case .mapping(let pairs):
            guard pairs.count == 1, let pair = pairs.first else {
                error(
                    "a step is one action, such as `- accept: { as: bob, zone: Z }`; this one has "
                        + (pairs.isEmpty ? "none" : pairs.map { "`\($0.key)`" }.joined(separator: ", ")), node.location)
                return nil
            }
            guard Self.actionNames.contains(pair.key) else {
                if OutsideActions.executable(named: pair.key, recipeDirectory: rootDirectory) != nil {
                    return decodeOutsideAction(pair.key, arguments: pair.value, at: pair.keyLocation)
                }
                unknownAction(pair.key, pair.keyLocation)
                return nil
            }
            if pair.key == "sh" { return decodeShell(pair.value, at: pair.keyLocation) }
            return decodeAction(pair.key, arguments: pair.value, at: pair.keyLocation)
        case .sequence:
            error("a step is an action, not a list", node.location)
            return nil
        }
    }

    private func decodeAction(_ name: String, arguments: RecipeNode?, at location: SourceLocation) -> Step? {
        // `- lane: other` names the lane directly.
        if name == "lane", let arguments, case .scalar(let s, _) = arguments.content, !s.isEmpty {
            return Step(action: .lane(name: s, parameters: [:]), location: location)
        }
        var pairs: [RecipePair] = []
        if let arguments {
            guard let p = self.pairs(arguments, "the arguments of `\(name)`") else { return nil }
            pairs = p
        }
        checkKeys(
            pairs,
            allowed: (Self.actionKeys[name] ?? []) + (Self.undeclaredZoneActions.contains(name) ? ["undeclared"] : []),
            in: "`\(name)`")
        let args = ActionArguments(name: name, pairs: pairs, location: arguments?.location ?? location)
        let actor = args.value("as").flatMap { string($0, "`as`") }
        let before = errors.count
        let expectedError = expectedError(of: args)
        let environment = environment(of: args)
        var database: DatabaseScope? = nil
        let action: Action?
        switch name {
        case "query": action = decodeQuery(args.value, location: args.location).map { .query($0) }
        case "deploy_schema": action = .deploySchema
        case "subscribe": action = decodeSubscribe(args.value, location: args.location).map { .subscribe($0) }
        case "plan", "apply": action = planOrApply(args)
        case "accept", "leave": action = acceptOrLeave(args)
        case "remove", "permission": action = membership(args)
        case "save": action = save(args, at: location)
        case "delete": action = delete(args)
        case "expect":
            database = expectDatabase(args)
            action = decodeExpectation(pairs, arguments: arguments, location: location, isPublic: database == .public)
                .map { .expect($0) }
        case "export": action = .export(out: text("out", of: args, required: false), zones: zoneList("zones", of: args))
        case "reset": action = .reset
        case "lane": action = laneCall(args)
        default: action = nil
        }
        guard let action, errors.count == before else { return nil }
        var step = Step(action: action, actor: actor, location: location, expectedError: expectedError)
        step.environment = environment
        step.database = database
        step.argumentLocations = argumentLocations(of: args)
        step.zoneIsUndeclared = undeclaredZone(of: args)
        // A `lane:` step's `name` is the lane it calls.
        if name != "lane" { step.name = args.value("name").flatMap { string($0, "`name`") } }
        if let node = args.value("within") {
            guard let text = string(node, "`within`"), let seconds = DurationText.seconds(text) else {
                error("`within` is a length of time such as `10s` or `500ms`", node.location)
                return nil
            }
            step.within = seconds
        }
        return step
    }

    private func decodeQuery(_ value: (String) -> RecipeNode?, location: SourceLocation) -> QueryStep? {
        let before = errors.count
        var database: DatabaseScope? = nil
        if let node = value("database"), let word = string(node, "`database`") {
            database = DatabaseScope(rawValue: word)
            if database == nil { error("unknown database `\(word)`; use private, shared or public", node.location) }
        }
        // The public database has one zone: a query there names none.
        let zone: String
        if let node = value("zone") {
            guard let name = string(node, "`zone`") else { return nil }
            if database == .public, name != defaultZoneName {
                error(
                    "the public database has one zone, `\(defaultZoneName)`, not `\(name)`; remove `zone:`",
                    node.location)
                return nil
            }
            zone = name
        } else if database == .public {
            zone = defaultZoneName
        } else {
            error("`query` needs `zone:` (or `database: public`, whose one zone needs no name)", location)
            return nil
        }
        guard let type = value("type").flatMap({ string($0, "`type`") }) else {
            if value("type") == nil { error("`query` needs `type:`", location) }
            return nil
        }
        var query = RecordQuery(recordType: type)
        for item in value("filter").map({ $0.items ?? [$0] }) ?? [] {
            guard let pairs = pairs(item, "a filter") else { continue }
            checkKeys(pairs, allowed: ["field", "comparator", "value", "distance"], in: "a filter")
            func part(_ key: String) -> RecipeNode? { pairs.first { $0.key == key }?.value }
            guard let field = part("field").flatMap({ string($0, "`field`") }),
                let comparatorNode = part("comparator"), let word = string(comparatorNode, "`comparator`"),
                let valueNode = part("value")
            else {
                error("a filter is `{ field: F, comparator: C, value: V }`", item.location)
                continue
            }
            let comparator: QueryFilter.Comparator
            do {
                comparator = try QueryText.comparator(word)
            } catch let problem {
                error(problem.message, comparatorNode.location)
                continue
            }
            let context = ValueContext(zone: zone, path: "query/\(zone)/\(field)", index: nil, allowShareURL: false)
            guard case .value(let v)? = declaredValue(valueNode, context) else { continue }
            var filter = QueryFilter(field, comparator, v)
            if let node = part("distance") {
                guard comparator == .near, let metres = number(node, "`distance`") else {
                    if comparator != .near { error("`distance` goes with the NEAR comparator only", node.location) }
                    continue
                }
                filter.distance = metres
            }
            if let problem = filter.problem {
                error(problem, item.location)
                continue
            }
            query.filters.append(filter)
        }
        for item in value("sort").map({ $0.items ?? [$0] }) ?? [] {
            if case .scalar(let text, _) = item.content {
                do {
                    query.sort.append(try QueryText.sort(text))
                } catch let problem {
                    error(problem.message, item.location)
                }
                continue
            }
            guard let pairs = pairs(item, "a sort key") else { continue }
            checkKeys(pairs, allowed: ["field", "ascending"], in: "a sort key")
            guard let field = pairs.first(where: { $0.key == "field" }).flatMap({ string($0.value, "`field`") })
            else {
                error("a sort key is `{ field: F, ascending: true }`", item.location)
                continue
            }
            let ascending = pairs.first { $0.key == "ascending" }.flatMap { bool($0.value, "`ascending`") } ?? true
            query.sort.append(QuerySort(field, ascending: ascending))
        }
        if let node = value("limit"), let limit = integer(node, "`limit`") {
            if limit < 1 { error("`limit` must be at least 1", node.location) } else { query.resultsLimit = Int(limit) }
        }
        var expected: QueryStep.Expected? = nil
        if let node = value("expect"), let pairs = pairs(node, "`expect`") {
            checkKeys(pairs, allowed: ["records", "names"], in: "the `expect` of `query`")
            if let count = pairs.first(where: { $0.key == "records" }) {
                if let n = integer(count.value, "`records`") { expected = .count(Int(n)) }
            } else if let names = pairs.first(where: { $0.key == "names" }) {
                expected = .names((names.value.items ?? []).compactMap { string($0, "a record name") })
            } else {
                error("`expect` of `query` takes `records: N` or `names: [...]`", node.location)
            }
        }
        guard errors.count == before else { return nil }
        return QueryStep(database: database, zone: zone, query: query, expect: expected)
    }

    private func decodeExpectation(
        _ args: [RecipePair], arguments: RecipeNode?, location: SourceLocation, isPublic: Bool
    ) -> Expectation? {
        func value(_ key: String) -> RecipeNode? { args.first { $0.key == key }?.value }
        /// The zone an expectation names: in the public database, its one zone, which needs no `zone:`.
        func zone(_ node: RecipeNode?, _ what: String) -> String? {
            guard isPublic else {
                guard let node else {
                    error("`expect` with `\(what):` needs `zone:`", arguments?.location ?? location)
                    return nil
                }
                return string(node, "`zone`")
            }
            if let node, let name = string(node, "`zone`"), name != defaultZoneName {
                error(
                    "the public database has one zone, `\(defaultZoneName)`, not `\(name)`; remove `zone:`",
                    node.location)
                return nil
            }
            return defaultZoneName
        }
        let kinds = ["can", "records", "field", "notified"].filter { value($0) != nil }
        guard kinds.count == 1 else {
            error(
                kinds.isEmpty
                    ? "`expect` needs one of `can:` (access), `records:` (a count), `field:` (a value) or "
                        + "`notified:` (a subscription ID)"
                    : "`expect` checks one thing; it has " + kinds.map { "`\($0):`" }.joined(separator: " and "),
                arguments?.location ?? location)
            return nil
        }
        switch kinds[0] {
        case "notified":
            for key in ["record", "zone"] where value(key) != nil {
                error(
                    "`\(key)` does not go with `notified:` in `expect`",
                    args.first { $0.key == key }?.keyLocation ?? location)
            }
            guard let node = value("notified"), let id = string(node, "`notified`") else { return nil }
            let toBe = value("to_be").flatMap { bool($0, "`to_be`") } ?? true
            return .notified(subscription: id, toBe: toBe)
        case "can":
            guard let canNode = value("can"), let word = string(canNode, "`can`") else { return nil }
            guard let capability = Expectation.Capability(rawValue: word) else {
                error(
                    "unknown capability `\(word)`"
                        + Suggestion.hint(for: word, in: Expectation.Capability.allCases.map(\.rawValue))
                        + "; use `read`, `write`, `delete` or `share`", canNode.location)
                return nil
            }
            guard let zone = zone(value("zone"), "can") else { return nil }
            let record = value("record").flatMap { string($0, "`record`") }
            if isPublic, capability != .read || record == nil {
                error(
                    "in the public database `expect` checks `can: read` of a `record:`; access to public records "
                        + "is the schema's security roles, which sharelane does not judge",
                    arguments?.location ?? location)
                return nil
            }
            let toBe = value("to_be").flatMap { bool($0, "`to_be`") } ?? true
            return .access(can: capability, zone: zone, record: record, toBe: toBe)
        case "records":
            for key in ["record", "to_be"] where value(key) != nil {
                error(
                    "`\(key)` does not go with `records:` in `expect`",
                    args.first { $0.key == key }?.keyLocation ?? location)
            }
            guard let countNode = value("records"), let count = integer(countNode, "`records`") else { return nil }
            guard count >= 0 else {
                error("`records` must be 0 or more", countNode.location)
                return nil
            }
            if isPublic {
                error(
                    "`records:` counts a zone's records; in the public database, count with a `query:` step "
                        + "(`query: { database: public, type: T, expect: { records: N } }`)",
                    arguments?.location ?? location)
                return nil
            }
            guard let zone = zone(value("zone"), "records") else { return nil }
            return .records(zone: zone, count: Int(count))
        default:
            guard let fieldNode = value("field"), let fieldPairs = pairs(fieldNode, "`field`") else { return nil }
            checkKeys(fieldPairs, allowed: Self.fieldExpectationKeys, in: "`field`")
            var parts: [String: String] = [:]
            if isPublic {
                guard let zone = zone(fieldNode["zone"], "field") else { return nil }
                parts["zone"] = zone
            }
            for key in ["zone", "record", "name"] where parts[key] == nil {
                guard let n = fieldNode[key] else {
                    error("`field` needs `\(key):`", fieldNode.location)
                    return nil
                }
                guard let s = string(n, "`\(key)`") else { return nil }
                parts[key] = s
            }
            guard let equalsNode = fieldNode["equals"] else {
                error("`field` needs `equals:`", fieldNode.location)
                return nil
            }
            let zone = parts["zone"] ?? ""
            let context = ValueContext(
                zone: zone, path: "expect/\(zone)/\(parts["record"] ?? "")/\(parts["name"] ?? "")", index: nil,
                allowShareURL: false)
            guard let equals = fieldValue(equalsNode, context) else { return nil }
            return .field(zone: zone, record: parts["record"] ?? "", name: parts["name"] ?? "", equals: equals)
        }
    }
}
