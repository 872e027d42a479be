import ShareKit

/// One lane step's arguments (`accept: { as: bob, zone: FamilyLists }`): the action's name, its key-value
/// pairs, and where they are, for messages.
struct ActionArguments {
    let name: String
    let pairs: [RecipePair]
    /// Where the arguments are written, else where the step is.
    let location: SourceLocation

    func value(_ key: String) -> RecipeNode? { pairs.first { $0.key == key }?.value }

    /// Where `key` is written, else where the arguments are.
    func keyLocation(_ key: String) -> SourceLocation { pairs.first { $0.key == key }?.keyLocation ?? location }
}

// Each action's own arguments, read into its `Action`; the keys every step shares (`as`, `expect_error`,
// `environment`, `within`) are read by `decodeAction`.
extension RecipeDecoder {
    /// The text of `key`; when it is missing and `required`, an error saying the action needs it.
    func text(_ key: String, of arguments: ActionArguments, required: Bool) -> String? {
        guard let node = arguments.value(key) else {
            if required { error("`\(arguments.name)` needs `\(key):`", arguments.location) }
            return nil
        }
        return string(node, "`\(key)`")
    }

    /// The zone names of `key`: a list, or one name.
    func zoneList(_ key: String, of arguments: ActionArguments) -> [String] {
        guard let node = arguments.value(key) else { return [] }
        if let items = node.items { return items.compactMap { string($0, "a zone name") } }
        return string(node, "`\(key)`").map { [$0] } ?? []
    }

    /// `expect_error: ACCESS_DENIED`: the CloudKit error code a step expects, or nil.
    func expectedError(of arguments: ActionArguments) -> ServerErrorCode? {
        guard let node = arguments.value("expect_error"), let word = string(node, "`expect_error`") else { return nil }
        guard let code = ServerErrorCode(rawValue: word) else {
            let codes = ServerErrorCode.allCases.map(\.rawValue)
            error(
                "`expect_error` takes a CloudKit error code such as ACCESS_DENIED, not `\(word)`"
                    + Suggestion.hint(for: word, in: codes), node.location)
            return nil
        }
        return code
    }

    /// `environment: production`, or nil.
    func environment(of arguments: ActionArguments) -> CloudKitEnvironment? {
        guard let node = arguments.value("environment"), let word = string(node, "`environment`") else { return nil }
        guard let environment = CloudKitEnvironment(rawValue: word) else {
            error("unknown environment `\(word)`; use `development` or `production`", node.location)
            return nil
        }
        return environment
    }

    /// `plan` and `apply`: `prune`, `only`.
    func planOrApply(_ arguments: ActionArguments) -> Action {
        let prune = arguments.value("prune").flatMap { bool($0, "`prune`") } ?? false
        let only = zoneList("only", of: arguments)
        return arguments.name == "plan" ? .plan(prune: prune, only: only) : .apply(prune: prune, only: only)
    }

    /// `accept` and `leave`: the share by `zone` (and `record`), or for `accept` by `url`.
    func acceptOrLeave(_ arguments: ActionArguments) -> Action? {
        let accepting = arguments.name == "accept"
        if accepting, arguments.value("url") != nil {
            // A person accepts by opening the link; the step does not need to know whose share it is.
            for key in ["zone", "record"] where arguments.value(key) != nil {
                error(
                    "`accept` names the share by `url:` or by `zone:` (and `record:`), not both; remove `\(key):`",
                    arguments.keyLocation(key))
            }
            return text("url", of: arguments, required: true).map { .acceptURL($0) }
        }
        if accepting, arguments.value("zone") == nil {
            error(
                "`accept` needs `zone:` (and `record:` for a share rooted at a record), or `url:` with the share's URL",
                arguments.location)
            return nil
        }
        let zone = text("zone", of: arguments, required: true)
        let record = text("record", of: arguments, required: false)
        return zone.map { accepting ? .accept(zone: $0, record: record) : .leave(zone: $0, record: record) }
    }

    /// `remove` and `permission`: the owner changes who takes part in a share (`zone`, and `record` for a
    /// share rooted at a record), as CloudKit's owner edits the share's participants and saves it.
    func membership(_ arguments: ActionArguments) -> Action? {
        let zone = text("zone", of: arguments, required: true)
        let record = text("record", of: arguments, required: false)
        let participant = text("participant", of: arguments, required: true)
        guard arguments.name == "permission" else {
            guard let zone, let participant else { return nil }
            return .removeParticipant(zone: zone, record: record, participant: participant)
        }
        let choices = [Permission.readOnly, .readWrite].map(\.recipeName)
        guard let node = arguments.value("to") else {
            error(
                "`permission` needs `to:`, the participant's new permission: "
                    + choices.map { "`\($0)`" }.joined(separator: " or "), arguments.location)
            return nil
        }
        guard let word = string(node, "`to`") else { return nil }
        guard let permission = Permission(recipeName: word), permission != .none else {
            error(
                "unknown permission `\(word)`" + Suggestion.hint(for: word, in: choices) + "; use "
                    + choices.map { "`\($0)`" }.joined(separator: " or ")
                    + " (to take the participant off the share, use `- remove: { zone, participant }`)",
                node.location)
            return nil
        }
        guard let zone, let participant else { return nil }
        return .changePermission(zone: zone, record: record, participant: participant, to: permission)
    }

    /// `save`: a record written as the step's user, its fields read as a recipe's are.
    func save(_ arguments: ActionArguments, at location: SourceLocation) -> Action? {
        let zone = text("zone", of: arguments, required: true)
        let record = text("record", of: arguments, required: true)
        let type = text("type", of: arguments, required: true)
        let parent = text("parent", of: arguments, required: false)
        var fields: [String: DeclaredValue] = [:]
        if let fieldsNode = arguments.value("fields"), let fieldPairs = pairs(fieldsNode, "`fields`") {
            for field in fieldPairs {
                if let problem = CloudKitLimits.fieldNameProblem(field.key) {
                    error(problem, field.keyLocation)
                    continue
                }
                let context = ValueContext(
                    zone: zone, path: "lanes/\(zone ?? "")/\(record ?? "")/\(field.key)", index: nil,
                    allowShareURL: true)
                if let v = declaredValue(field.value, context) { fields[field.key] = v }
                noteTyped(field, at: location)
            }
        }
        guard let zone, let record, let type else { return nil }
        if let problem = CloudKitLimits.recordTypeProblem(type) {
            error(problem, arguments.value("type")?.location ?? location)
        }
        return .save(zone: zone, record: record, type: type, parent: parent, fields: fields)
    }

    /// `delete`: a record, by zone and name.
    func delete(_ arguments: ActionArguments) -> Action? {
        let zone = text("zone", of: arguments, required: true)
        let record = text("record", of: arguments, required: true)
        guard let zone, let record else { return nil }
        return .delete(zone: zone, record: record)
    }

    /// `lane: { name, parameters }`: another lane, with its parameters.
    func laneCall(_ arguments: ActionArguments) -> Action? {
        guard let laneName = text("name", of: arguments, required: true) else { return nil }
        var parameters: [String: String] = [:]
        if let paramsNode = arguments.value("parameters"), let paramPairs = pairs(paramsNode, "`parameters`") {
            for p in paramPairs {
                guard Variables.isValidName(p.key) else {
                    error("`\(p.key)` is not a parameter name; use letters, digits and `_`", p.keyLocation)
                    continue
                }
                if let v = string(p.value, "parameter `\(p.key)`") { parameters[p.key] = v }
            }
        }
        return .lane(name: laneName, parameters: parameters)
    }

    /// `expect`'s `database:`, which takes only `public`: where a user reads a zone follows from who they
    /// are.
    func expectDatabase(_ arguments: ActionArguments) -> DatabaseScope? {
        guard let node = arguments.value("database"), let word = string(node, "`database`") else { return nil }
        let database = DatabaseScope(rawValue: word)
        if database != .public {
            error(
                "`database:` on `expect` takes `public`, not `\(word)`; without it the owner reads its "
                    + "private database and anyone else the shared one", node.location)
        }
        return database
    }
}
