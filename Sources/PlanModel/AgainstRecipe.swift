/// What a plan made with `plan --against` is against: the state another recipe declares (a file, or a file at
/// a git revision), applied to a store in memory, instead of a live store.
///
/// A base that cannot be planned from (it does not validate, or does not exist at that revision) leaves the
/// plan against nothing: every declared thing is new, and `problem` says why, so that a reviewer does not
/// take the plan for the difference a change makes.
public struct AgainstRecipe: Sendable, Hashable, Codable {
    /// The base recipe's path as the user named it (relative to the repository's root for a git revision).
    public var recipe: String
    /// The git revision it was read at (`origin/main`); nil for a file read from disk.
    public var revision: String?
    /// Why the plan is against nothing; nil when the base recipe was applied.
    public var problem: String?

    public init(recipe: String, revision: String? = nil, problem: String? = nil) {
        self.recipe = recipe
        self.revision = revision
        self.problem = problem
    }

    /// `` `sharelane.yaml` at `origin/main` ``, or `` `base.yaml` `` for a file.
    public var name: String {
        "`\(recipe)`" + (revision.map { " at `\($0)`" } ?? "")
    }

    /// The line a text or markdown plan starts with.
    public var line: String {
        if let problem { return "Against nothing: \(name) \(problem); every declared thing is planned as new." }
        return "Against \(name): the state that recipe declares, not a live store."
    }
}
