import Foundation

/// Loads a recipe: reads the YAML and its includes, expands variables and generated records, decodes the
/// declared state and validates it, reporting every problem at once.
///
/// ```swift
/// let recipe = try RecipeLoader(overrides: ["owner_email": "ann@example.com"]).load(path: "Recipes/sharelane.yaml")
/// ```
public struct RecipeLoader: Sendable {
    /// The process environment, consulted by `${NAME}` after `vars:`.
    public var environment: [String: String]
    /// `--var KEY=VALUE` and lane parameters; they beat `vars:`.
    public var overrides: [String: String]
    /// `--env NAME`: also load `.env.NAME` beside the recipe.
    public var envName: String?
    /// The names of `overrides` that only a `--var-file` set: a file may hold the variables of several
    /// recipes, so one this recipe does not read is a warning, as Terraform warns of a `.tfvars` value.
    public var fileOnlyOverrides: Set<String> = []

    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, overrides: [String: String] = [:],
        envName: String? = nil
    ) {
        self.environment = environment
        self.overrides = overrides
        self.envName = envName
    }

    /// Loads and validates the recipe at `path`; messages show `path` as given.
    /// - Throws: `RecipeErrors` with every problem found, each located in the file it is in.
    public func load(path: String) throws(RecipeErrors) -> Recipe {
        try loadWithInputs(path: path).recipe
    }

    /// Loads and validates the recipe at `path`, and says what it was made from: loading again gives the same
    /// recipe while those inputs are unchanged.
    /// - Throws: `RecipeErrors` with every problem found, each located in the file it is in.
    public func loadWithInputs(path: String) throws(RecipeErrors) -> (recipe: Recipe, inputs: RecipeInputs) {
        let log = InputLog()
        let envFiles = self.envFiles(file: path, log: log)
        var includes = IncludeResolver(log: log, variables: includeVariables(envFiles.values, log: log))
        let tree = includes.load(path: path)
        let recipe = try finish(
            tree, file: path, errors: envFiles.errors + includes.errors, envFiles: envFiles.values,
            includeNames: includes.referencedNames, log: log)
        return (recipe, log.inputs(environment: environment))
    }

    /// What `${NAME}` in an include path reads: everything but the recipe's `vars:` (each file's own are added
    /// as its includes are read).
    private func includeVariables(_ envFiles: [[String: String]], log: InputLog) -> Variables {
        Variables(overrides: overrides, vars: [:], environment: environment, envFiles: envFiles, log: log)
    }

    /// Loads a recipe given as text; `file` names it in messages, and includes, `.env` files and assets are
    /// looked up beside it.
    /// - Throws: `RecipeErrors` with every problem found.
    public func load(yaml: String, file: String) throws(RecipeErrors) -> Recipe {
        let log = InputLog()
        let envFiles = self.envFiles(file: file, log: log)
        var includes = IncludeResolver(log: log, variables: includeVariables(envFiles.values, log: log))
        var tree: RecipeNode? = nil
        do {
            let root = try YAMLReader(displayPath: file).parse(text: yaml)
            tree = includes.resolveIncludes(of: root, path: file, identity: RecipePath.identity(file), chain: [])
        } catch {
            throw error
        }
        return try finish(
            tree, file: file, errors: envFiles.errors + includes.errors, envFiles: envFiles.values,
            includeNames: includes.referencedNames, log: includes.log)
    }

    /// The `.env.NAME` (with `--env NAME`) and `.env` files beside the recipe, in the order `${NAME}` reads
    /// them, and their problems.
    private func envFiles(file: String, log: InputLog) -> (values: [[String: String]], errors: [RecipeError]) {
        var errors: [RecipeError] = []
        let directory = RecipePath.directory(of: file)
        var envFiles: [[String: String]] = []
        if let envName {
            let envPath = RecipePath.join(directory, ".env.\(envName)")
            log.read(file: envPath)
            if let text = try? String(contentsOfFile: envPath, encoding: .utf8) {
                let parsed = DotEnv.parse(text, file: envPath)
                envFiles.append(parsed.values)
                errors += parsed.errors
            } else {
                errors.append(
                    RecipeError(
                        "`--env \(envName)` needs the file \(envPath) beside the recipe; it does not exist or cannot be read",
                        file: file))
            }
        }
        let dotEnvPath = RecipePath.join(directory, ".env")
        log.read(file: dotEnvPath)
        if FileManager.default.fileExists(atPath: dotEnvPath),
            let text = try? String(contentsOfFile: dotEnvPath, encoding: .utf8)
        {
            let parsed = DotEnv.parse(text, file: dotEnvPath)
            envFiles.append(parsed.values)
            errors += parsed.errors
        }
        return (envFiles, errors)
    }

    private func finish(
        _ tree: RecipeNode?, file: String, errors initial: [RecipeError], envFiles: [[String: String]],
        includeNames: Set<String>, log: InputLog
    ) throws(RecipeErrors) -> Recipe {
        var errors = initial
        let directory = RecipePath.directory(of: file)
        guard let tree else { throw RecipeErrors(Self.sorted(errors)) }

        var variables = Variables(
            overrides: overrides, vars: [:], environment: environment, envFiles: envFiles, log: log)
        let registered = Self.registeredNames(in: tree)
        variables.runtimeNames = registered.union(LaneValueNames.errorHook).union([LaneValueNames.lane])
        errors += LaneValueReferences(tree: tree, registered: registered).errors
        // `vars:` values may use the environment and overrides, not each other.
        if let varsNode = tree["vars"] {
            if let pairs = varsNode.pairs {
                for pair in pairs {
                    if variables.runtimeNames.contains(pair.key) {
                        errors.append(
                            RecipeError(
                                Self.runtimeNameMessage(pair.key, registered: registered, as: "`vars:` declares it"),
                                at: pair.keyLocation))
                        continue
                    }
                    guard let text = Variables.value(of: pair, errors: &errors) else { continue }
                    do {
                        variables.vars[pair.key] = try variables.expand(text, includeVars: false)
                    } catch {
                        errors.append(
                            RecipeError(
                                error.message,
                                at: error.offset.map(pair.value.location(ofCharacter:)) ?? pair.value.location))
                    }
                }
            } else if !(varsNode.scalar.map(ScalarResolver.isNull) ?? false) {
                errors.append(RecipeError("`vars` must be a mapping of names to values", at: varsNode.location))
            }
        }
        // A value given for a variable the recipe never reads is a mistyped name (`tikcet=QA-123`), refused as
        // Terraform refuses an undeclared `-var`, before it can leave the recipe's default in force unnoticed.
        let variableNames = Set(variables.vars.keys).union(Self.referencedVariables(in: tree)).union(includeNames)
        var loadWarnings: [RecipeError] = []
        // A value given for a name a running lane sets (`${lane}`, a `register:`ed value) would never be read
        // either: the lane's own value stands in its place.
        for name in overrides.keys.sorted() {
            let message: String
            if variables.runtimeNames.contains(name) {
                message = Self.runtimeNameMessage(name, registered: registered, as: "it is given a value")
            } else if !variableNames.contains(name) {
                message =
                    "variable `\(name)` is given a value, but the recipe neither declares it under `vars:` nor uses "
                    + "it as `${\(name)}`" + Suggestion.hint(for: name, in: Array(variableNames))
            } else {
                continue
            }
            var problem = RecipeError(message, file: file)
            if fileOnlyOverrides.contains(name) {
                problem.message += " (set by a --var-file; ignored)"
                problem.isWarning = true
                loadWarnings.append(problem)
            } else {
                errors.append(problem)
            }
        }
        var failedValues: Set<SourceLocation> = []
        let expanded = expand(tree, variables, errors: &errors, failed: &failedValues, isTop: true)
        // A value whose variable is unknown would cause follow-on errors at the same place; report it once.
        let variableErrorPlaces = Set(errors.compactMap(\.location)).union(failedValues)

        var merged = variables.vars
        for (key, value) in overrides { merged[key] = value }
        let decoder = RecipeDecoder(rootDirectory: directory, log: log)
        let decoded = decoder.decode(expanded, file: file, variables: merged)
        errors += decoder.errors.filter {
            !variableErrorPlaces.contains($0.location ?? SourceLocation(file: "", line: 0, column: 0))
        }
        guard var recipe = decoded else { throw RecipeErrors(Self.sorted(errors), warnings: loadWarnings) }
        var validator = RecipeValidator()
        validator.variableNames = variableNames
        validator.runtimeNames = variables.runtimeNames
        validator.registeredNames = registered
        validator.validate(&recipe, decoder: decoder)
        var inference = SchemaInference(typedFields: decoder.typedFields)
        inference.infer(&recipe)
        errors += (validator.errors + inference.errors).filter {
            !variableErrorPlaces.contains($0.location ?? SourceLocation(file: "", line: 0, column: 0))
        }
        if !errors.isEmpty { throw RecipeErrors(Self.sorted(errors), warnings: loadWarnings + validator.warnings) }
        recipe.warnings = loadWarnings + validator.warnings + inference.warnings
        recipe.commandEnvironment = commandEnvironment(envFiles)
        return recipe
    }

    /// What a lane's commands get under their own names: the `.env` files' values (`.env.NAME` before `.env`)
    /// where the process environment does not set the name, then the `--var-file`s' values, as `${NAME}` reads
    /// them.
    private func commandEnvironment(_ envFiles: [[String: String]]) -> CommandEnvironment {
        var values: [String: String] = [:]
        for file in envFiles.reversed() {
            for (name, value) in file where environment[name] == nil { values[name] = value }
        }
        for name in fileOnlyOverrides { values[name] = overrides[name] }
        return CommandEnvironment(values)
    }

    /// The refusal of a variable named as a value a running lane sets: `${lane}` is the lane running, and a
    /// `register:`ed name the step's answer, so a value given for it would be silently ignored.
    static func runtimeNameMessage(_ name: String, registered: Set<String>, as given: String) -> String {
        let setter: String
        switch name {
        case _ where registered.contains(name):
            setter = "a lane step registers it (`register: \(name)`), and `${\(name)}` reads that step's value"
        case LaneValueNames.lane: setter = "the lane runner sets it to the name of the lane running"
        case LaneValueNames.laneErrorPlace: setter = "the lane runner sets it to where the failed step is written"
        default: setter = "the lane runner sets it to what made the lane fail"
        }
        return "variable `\(name)` cannot be set: \(setter); \(given), which no `${\(name)}` would read. "
            + "Give the value another name"
    }

    /// Every name the recipe writes as `${NAME}` or `${NAME:-default}`, in keys and values, `vars:` included
    /// (`$${` is a literal, not a reference).
    static func referencedVariables(in tree: RecipeNode) -> Set<String> {
        var names: Set<String> = []
        func scan(_ text: String) {
            guard text.contains("${") else { return }
            var rest = Substring(text)
            while let range = rest.range(of: "${") {
                if range.lowerBound > rest.startIndex, rest[rest.index(before: range.lowerBound)] == "$" {
                    rest = rest[range.upperBound...]
                    continue
                }
                let name = rest[range.upperBound...].prefix { $0 == "_" || $0.isLetter || $0.isNumber }
                if !name.isEmpty { names.insert(String(name)) }
                rest = rest[range.upperBound...]
            }
        }
        func visit(_ node: RecipeNode) {
            switch node.content {
            case .scalar(let text, _): scan(text)
            case .sequence(let items): items.forEach(visit)
            case .mapping(let pairs):
                for pair in pairs {
                    scan(pair.key)
                    visit(pair.value)
                }
            }
        }
        visit(tree)
        return names
    }

    /// The names lane steps register (`register: NAME` anywhere under `lanes:` and the hooks), read before
    /// variables are substituted: `${NAME}` is then a lane's value, not a variable.
    static func registeredNames(in tree: RecipeNode) -> Set<String> {
        var names: Set<String> = []
        func visit(_ node: RecipeNode) {
            switch node.content {
            case .scalar: break
            case .sequence(let items): items.forEach(visit)
            case .mapping(let pairs):
                for pair in pairs {
                    if pair.key == "register", case .scalar(let name, _) = pair.value.content { names.insert(name) }
                    visit(pair.value)
                }
            }
        }
        for key in ["lanes", "before_all", "after_all", "error", "before_each", "after_each"] {
            if let node = tree[key] { visit(node) }
        }
        return names
    }

    /// Substitutes `${…}` in every key and scalar except the `vars:` block; notes where each value that could not
    /// be substituted is in `failedValues`.
    private func expand(
        _ node: RecipeNode, _ variables: Variables, errors: inout [RecipeError],
        failed failedValues: inout Set<SourceLocation>, isTop: Bool = false
    ) -> RecipeNode {
        var node = node
        switch node.content {
        case .scalar(let text, let plain):
            guard text.contains("${") || text.contains("$${") else { return node }
            do {
                node.content = .scalar(try variables.expand(text), plain: plain)
            } catch {
                errors.append(
                    RecipeError(error.message, at: error.offset.map(node.location(ofCharacter:)) ?? node.location))
                failedValues.insert(node.location)
            }
        case .sequence(let items):
            node.content = .sequence(items.map { expand($0, variables, errors: &errors, failed: &failedValues) })
        case .mapping(let pairs):
            var out: [RecipePair] = []
            out.reserveCapacity(pairs.count)
            for var pair in pairs {
                if isTop && pair.key == "vars" {
                    out.append(pair)
                    continue
                }
                if pair.key.contains("${") {
                    do {
                        pair.key = try variables.expand(pair.key)
                    } catch {
                        errors.append(RecipeError(error.message, at: pair.keyLocation))
                    }
                }
                pair.value = expand(pair.value, variables, errors: &errors, failed: &failedValues)
                out.append(pair)
            }
            node.content = .mapping(out)
        }
        return node
    }

    /// Errors grouped by file (in the order files were first reported), then by line and column; duplicates
    /// (the same template failing in every generated record) once.
    static func sorted(_ errors: [RecipeError]) -> [RecipeError] {
        var fileOrder: [String: Int] = [:]
        for e in errors where fileOrder[e.file ?? ""] == nil { fileOrder[e.file ?? ""] = fileOrder.count }
        var seen = Set<RecipeError>()
        let unique = errors.filter { seen.insert($0).inserted }
        return unique.enumerated().sorted { a, b in
            let fa = fileOrder[a.element.file ?? ""] ?? 0
            let fb = fileOrder[b.element.file ?? ""] ?? 0
            if fa != fb { return fa < fb }
            let la = (a.element.location?.line ?? 0, a.element.location?.column ?? 0)
            let lb = (b.element.location?.line ?? 0, b.element.location?.column ?? 0)
            if la != lb { return la < lb }
            return a.offset < b.offset
        }.map(\.element)
    }
}
