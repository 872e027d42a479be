import ShareKit

// The steps that make a lane a script: `sh:`, outside actions (`sharelane-NAME`) and their parameters, and
// `register:`.
extension RecipeDecoder {
    /// `sh: "command line"` or `sh: { run: "command line" | [program, argument…], dir:, env:, timeout:,
    /// allow_failure:, register: }`.
    func decodeShell(_ node: RecipeNode, at location: SourceLocation) -> Step? {
        let before = errors.count
        if case .scalar(let text, _) = node.content {
            guard !text.isEmpty else {
                error("`sh` needs a command, such as `- sh: \"scripts/seed.sh\"`", node.location)
                return nil
            }
            return Step(action: .sh(ShellStep(command: .shell(text))), location: location)
        }
        guard let args = pairs(node, "the arguments of `sh`") else { return nil }
        checkKeys(args, allowed: Self.actionKeys["sh"] ?? [], in: "`sh`")
        func value(_ key: String) -> RecipeNode? { args.first { $0.key == key }?.value }
        var command: ShellStep.Command?
        switch value("run")?.content {
        case .scalar(let text, _)? where !text.isEmpty: command = .shell(text)
        case .sequence(let items)? where !items.isEmpty:
            let words = items.compactMap { string($0, "an argument of `run`") }
            if words.count == items.count { command = .arguments(words) }
        case nil: error("`sh` needs `run:`, a command line or a list of the program and its arguments", location)
        default: error("`run` is a command line or a list of the program and its arguments", node.location)
        }
        var step = ShellStep(command: command ?? .shell(""))
        step.directory = value("dir").flatMap { string($0, "`dir`") }
        if let envNode = value("env"), let envPairs = pairs(envNode, "`env`") {
            for pair in envPairs {
                guard Variables.isValidName(pair.key) else {
                    error("`\(pair.key)` is not an environment variable name", pair.keyLocation)
                    continue
                }
                if let text = string(pair.value, "`\(pair.key)`") { step.environment[pair.key] = text }
            }
        }
        if let node = value("timeout") {
            if let text = string(node, "`timeout`"), let seconds = DurationText.seconds(text), seconds > 0 {
                step.timeout = seconds
            } else {
                error("`timeout` is a length of time such as `60s` or `2m`", node.location)
            }
        }
        step.allowFailure = value("allow_failure").flatMap { bool($0, "`allow_failure`") } ?? false
        step.register = registeredName(value("register"))
        guard command != nil, errors.count == before else { return nil }
        var shell = Step(action: .sh(step), location: location)
        shell.name = value("name").flatMap { string($0, "`name`") }
        return shell
    }

    /// A step that names an outside action (`sharelane-NAME`): its arguments are its parameters, as JSON, but
    /// for `register:` (the runner's) and `as:`.
    func decodeOutsideAction(_ name: String, arguments: RecipeNode, at location: SourceLocation) -> Step? {
        let before = errors.count
        var action = OutsideAction(name: name, parameters: .object([:]))
        var actor: String?
        if case .scalar(let text, _) = arguments.content, ScalarResolver.isNull(text) {
            return Step(action: .outside(action), location: location)
        }
        guard let args = pairs(arguments, "the parameters of `\(name)`") else { return nil }
        var members: [String: ActionValue] = [:]
        for pair in args {
            switch pair.key {
            case "register": action.register = registeredName(pair.value)
            case "as": actor = string(pair.value, "`as`")
            default: members[pair.key] = actionValue(pair.value)
            }
        }
        action.parameters = .object(members)
        guard errors.count == before else { return nil }
        return Step(action: .outside(action), actor: actor, location: location)
    }

    /// A step's `register: NAME`, checked to be a variable name.
    func registeredName(_ node: RecipeNode?) -> String? {
        guard let node, let name = string(node, "`register`") else { return nil }
        guard Variables.isValidName(Substring(name)) else {
            error("`register` names a variable: letters, digits and `_`, such as `register: share_link`", node.location)
            return nil
        }
        return name
    }

    /// A YAML value as the JSON an outside action reads: plain scalars typed as YAML types them.
    func actionValue(_ node: RecipeNode) -> ActionValue {
        switch node.content {
        case .scalar(let text, let plain):
            guard plain else { return .string(text) }
            switch ScalarResolver.resolve(text) {
            case .null: return .null
            case .bool(let flag): return .bool(flag)
            case .int(let number): return .integer(number)
            case .double(let number) where number.isFinite: return .number(number)
            default: return .string(text)
            }
        case .sequence(let items): return .list(items.map(actionValue))
        case .mapping(let pairs):
            return .object(Dictionary(pairs.map { ($0.key, actionValue($0.value)) }) { _, later in later })
        }
    }
}
