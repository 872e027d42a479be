/// Loads a recipe file and the files it includes, merged into one tree: included files in order, then the
/// including file; mappings merge deeply, lists append, other values are replaced.
struct IncludeResolver {
    /// How many files one recipe may pull in, so that a fan-out of includes stays bounded.
    static let maxFiles = 200

    private(set) var errors: [RecipeError] = []
    private var filesRead = 0
    /// Where every file read is noted.
    let log: InputLog
    /// What `${NAME}` in an include's path is: the variables given (`--var`, lane parameters), the environment
    /// and the `.env` files, and the `vars:` of the file that includes. Nil: paths are taken as written.
    var variables: Variables?
    /// The names include paths read as `${NAME}`: a value given for one of them is one the recipe reads.
    private(set) var referencedNames: Set<String> = []

    init(log: InputLog, variables: Variables? = nil) {
        self.log = log
        self.variables = variables
    }

    /// The merged tree of `path`, or nil when the file itself could not be read (the errors say why).
    mutating func load(
        path: String, chain: [(display: String, identity: String)] = [], includedAt: SourceLocation? = nil
    ) -> RecipeNode? {
        let identity = RecipePath.identity(path)
        if let start = chain.firstIndex(where: { $0.identity == identity }) {
            let cycle = chain[start...].map(\.display) + [path]
            let message = "include cycle: " + cycle.joined(separator: " → ")
            if let includedAt {
                errors.append(RecipeError(message, at: includedAt))
            } else {
                errors.append(RecipeError(message, file: path))
            }
            return nil
        }
        filesRead += 1
        if filesRead > Self.maxFiles {
            let message = "more than \(Self.maxFiles) files are included"
            if let includedAt { errors.append(RecipeError(message, at: includedAt)) }
            return nil
        }
        let root: RecipeNode
        log.read(file: path)
        // Refused unopened (`RecipePath.notRegularFile`). The recipe named on the command line may be a pipe
        // (`validate <(…)`): only included files are held to this.
        if let includedAt, let kind = RecipePath.notRegularFile(path) {
            errors.append(
                RecipeError(
                    "included file \(path) is \(kind), not a regular file; include recipe files", at: includedAt))
            return nil
        }
        do {
            root = try YAMLReader.read(path: path, displayPath: path)
        } catch {
            if let includedAt, error.errors.count == 1, error.errors[0].location == nil {
                // A file that cannot be read is reported where it is included.
                errors.append(RecipeError("included file \(path): \(error.errors[0].message)", at: includedAt))
            } else {
                errors.append(contentsOf: error.errors)
            }
            return nil
        }
        return resolveIncludes(of: root, path: path, identity: identity, chain: chain)
    }

    /// Resolves the `include:` key of a tree already parsed (used for recipes given as text).
    mutating func resolveIncludes(
        of root: RecipeNode, path: String, identity: String, chain: [(display: String, identity: String)]
    ) -> RecipeNode? {
        guard let pairs = root.pairs, let includeNode = root["include"] else { return root }
        var includes: [RecipeNode] = []
        switch includeNode.content {
        case .scalar(let s, let plain):
            if !(plain && ScalarResolver.isNull(s)) { includes = [includeNode] }
        case .sequence(let items): includes = items
        case .mapping:
            errors.append(RecipeError("`include` takes a file name or a list of file names", at: includeNode.location))
        }
        var merged: RecipeNode? = nil
        let directory = RecipePath.directory(of: path)
        let scoped = variables.map { Self.scoped($0, by: root, errors: &errors) }
        for item in includes {
            guard var name = item.scalar, !name.isEmpty else {
                errors.append(
                    RecipeError("`include` takes file names; this is \(item.kindDescription)", at: item.location))
                continue
            }
            if let scoped, name.contains("$") {
                referencedNames.formUnion(RecipeLoader.referencedVariables(in: item))
                do {
                    name = try scoped.expand(name)
                } catch {
                    errors.append(
                        RecipeError(error.message, at: error.offset.map(item.location(ofCharacter:)) ?? item.location))
                    continue
                }
            }
            let includedPath = RecipePath.join(directory, name)
            guard let included = load(path: includedPath, chain: chain + [(path, identity)], includedAt: item.location)
            else { continue }
            merged = merged.map { Self.merge($0, included) } ?? included
        }
        let own = RecipeNode(.mapping(pairs.filter { $0.key != "include" }), tag: root.tag, location: root.location)
        return merged.map { Self.merge($0, own) } ?? own
    }

    /// The variables an include path of `root` reads: `variables` with the `vars:` of `root` itself, which is
    /// read before what it includes (the included files' `vars:` are not known yet). Their problems are
    /// reported where the whole recipe's `vars:` are checked.
    private static func scoped(_ variables: Variables, by root: RecipeNode, errors: inout [RecipeError]) -> Variables {
        var scoped = variables
        for pair in root["vars"]?.pairs ?? [] {
            guard Variables.isValidName(pair.key), let text = pair.value.scalar,
                let value = try? scoped.expand(text, includeVars: false)
            else { continue }
            scoped.vars[pair.key] = value
        }
        return scoped
    }

    /// `over` merged onto `base`.
    static func merge(_ base: RecipeNode, _ over: RecipeNode) -> RecipeNode {
        switch (base.content, over.content) {
        case (.mapping(var basePairs), .mapping(let overPairs)):
            var index: [String: Int] = [:]
            for (i, pair) in basePairs.enumerated() { index[pair.key] = i }
            for pair in overPairs {
                if let i = index[pair.key] {
                    basePairs[i].value = merge(basePairs[i].value, pair.value)
                } else {
                    index[pair.key] = basePairs.count
                    basePairs.append(pair)
                }
            }
            return RecipeNode(.mapping(basePairs), tag: over.tag ?? base.tag, location: base.location)
        case (.sequence(let baseItems), .sequence(let overItems)):
            return RecipeNode(.sequence(baseItems + overItems), tag: over.tag ?? base.tag, location: base.location)
        case (_, .scalar(let s, let plain)) where plain && ScalarResolver.isNull(s):
            // `key:` with nothing after it in the including file keeps what an included file set.
            return base
        default:
            return over
        }
    }
}
