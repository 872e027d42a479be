import ShareKit

// Where a step's words are written, and whether it says its zone is not the recipe's: validation points at
// the mistyped word, and holds a step to the recipe's zones unless it says otherwise.
extension RecipeDecoder {
    /// The actions that name a zone and may take `undeclared: true`.
    static let undeclaredZoneActions: Set<String> = [
        "accept", "leave", "remove", "permission", "save", "delete", "expect", "query", "subscribe",
    ]

    /// Where each argument's value is written: `zone`, `record`, `as`, `parent`, … (an `expect`'s `field:`
    /// gives its own `zone` and `record`), and each of a `lane:` step's parameters as `parameters.KEY`, at
    /// its key.
    func argumentLocations(of arguments: ActionArguments) -> [String: SourceLocation] {
        var places: [String: SourceLocation] = [:]
        for pair in arguments.pairs { places[pair.key] = pair.value.location }
        if arguments.name == "expect", let field = arguments.value("field"), case .mapping(let pairs) = field.content {
            for pair in pairs where pair.key == "zone" || pair.key == "record" {
                places[pair.key] = pair.value.location
            }
        }
        if arguments.name == "lane", let parameters = arguments.value("parameters"),
            case .mapping(let pairs) = parameters.content
        {
            for pair in pairs { places["parameters.\(pair.key)"] = pair.keyLocation }
        }
        return places
    }

    /// `undeclared: true`: the step's zone is another recipe's or the app's.
    func undeclaredZone(of arguments: ActionArguments) -> Bool {
        guard let node = arguments.value("undeclared") else { return false }
        return bool(node, "`undeclared`") ?? false
    }
}
