import ArgumentParser
import Foundation
import Logging
import PlanModel
import Planner
import Recipe
import ShareKit

/// `plan --against RECIPE`: plans against the state another recipe declares instead of a live store, so a
/// pull request's plan needs no store and no credentials. The base recipe (a file, or `git:REF[:PATH]`, a file
/// at a git revision with the includes, variables files and assets of that revision) is applied to a `memory:`
/// store in the planned recipe's container and environment (its users, zones, records, shares, acceptances
/// and subscriptions), and the recipe is planned against that store.
struct AgainstOptions: ParsableArguments {
    @Option(
        name: .customLong("against"),
        help: ArgumentHelp(
            "Plan against the state another recipe declares, in memory, with no store: a recipe file, or git:REF[:PATH].",
            discussion: """
                git:REF reads the recipe at a git revision, with its includes and assets there; PATH is relative \
                to the repository's root and defaults to the recipe's own (git:origin/main).
                """,
            valueName: "recipe"))
    var against: String?

    /// The base recipe as the user named it.
    enum Base: Equatable {
        case file(String)
        case git(revision: String, path: String?)

        init(_ text: String) {
            guard text.hasPrefix("git:") else {
                self = .file(text)
                return
            }
            // A revision holds no colon (git refuses one in a ref name), so the first one ends it.
            let rest = text.dropFirst("git:".count)
            if let colon = rest.firstIndex(of: ":") {
                let path = String(rest[rest.index(after: colon)...])
                self = .git(revision: String(rest[..<colon]), path: path.isEmpty ? nil : path)
            } else {
                self = .git(revision: String(rest), path: nil)
            }
        }
    }

    /// Refuses options that make no sense without a store.
    /// - Throws: `ValidationError` naming the option.
    func validate(out: String?, store: String?) throws {
        guard against != nil else { return }
        if out != nil {
            throw ValidationError(
                "--out saves a plan to apply to a store; a plan --against another recipe applies to none")
        }
        if store != nil {
            throw ValidationError(
                "--against plans against the state another recipe declares, with no store; drop --store, or plan twice")
        }
    }

    /// The `memory:` store holding what the base recipe declares, in `recipe`'s container and environment,
    /// and what the plan says it is against. A base that does not validate, does not exist at the revision or
    /// names another container or environment leaves the store empty, saying why (its problems printed on
    /// standard error).
    /// - Throws: `CommandFailure` when git cannot read the revision or the base cannot be applied in memory.
    func baseStore(
        for recipe: Recipe, recipePath: String, selection: RecipeSelection, parallelism: Int, logger: Logger
    ) async throws -> (store: any Store, base: AgainstRecipe) {
        let store = try StoreLocator.open(
            "memory:", logger: logger, container: recipe.container, environment: recipe.environment.rawValue)
        guard let against else { return (store, AgainstRecipe(recipe: recipePath)) }
        var tree: GitRevisionTree?
        defer { tree?.remove() }
        let file: String
        var base: AgainstRecipe
        switch Base(against) {
        case .file(let path):
            file = path
            base = AgainstRecipe(recipe: path)
            guard FileManager.default.fileExists(atPath: path) else {
                throw CommandFailure.input("--against \(path): no such file")
            }
        case .git(let revision, let named):
            let directory = URL(fileURLWithPath: recipePath).deletingLastPathComponent().path
            let (root, commit) = try await GitRevisionTree.resolve(revision: revision, in: directory)
            let path: String
            if let named { path = named } else { path = try await GitRevisionTree.pathInRepository(of: recipePath) }
            base = AgainstRecipe(recipe: path, revision: revision)
            guard await GitRevisionTree.hasFile(path, commit: commit, root: root) else {
                base.problem = "does not exist"
                Terminal.printError("warning: \(path) does not exist at \(revision); planning against nothing")
                return (store, base)
            }
            let checkedOut = try await GitRevisionTree.checkOut(revision: revision, commit: commit, root: root)
            tree = checkedOut
            if let leaving = checkedOut.leavingLink(of: path) {
                throw CommandFailure.input(
                    "--against git:\(revision): \(leaving) is a symbolic link out of the repository at \(revision); "
                        + "a revision's recipe is read from its own files only: make it a file, or a link within "
                        + "the repository")
            }
            file = checkedOut.file(path)
        }
        let loader = try selection.loader()
        let loaded: Recipe
        do {
            loaded = try loader.load(path: file)
        } catch {
            for problem in error.errors {
                Terminal.printError(tree?.naming(problem.description) ?? problem.description)
            }
            for link in tree?.linksLeaving ?? [] {
                Terminal.printError(
                    "note: \(link) is a symbolic link out of the repository at \(tree?.revision ?? ""); it was "
                        + "not read")
            }
            let count = error.errors.count
            base.problem = "does not validate (\(count) error\(count == 1 ? "" : "s"))"
            Terminal.printError("warning: \(base.name) does not validate; planning against nothing")
            return (store, base)
        }
        guard loaded.container == recipe.container, loaded.environment == recipe.environment else {
            base.problem =
                "names another container or environment (\(loaded.container), \(loaded.environment.rawValue))"
            return (store, base)
        }
        // The base's `!asset` files are kept from beside it: its plan says where (`Plan.assetFiles`).
        do throws(PlanAndApply.Failure) {
            _ = try await PlanAndApply(store: store, logger: logger, parallelism: parallelism).run(loaded)
        } catch .changesFailed(let report) {
            throw CommandFailure.input(
                "cannot make the state \(base.name) declares in memory: "
                    + report.failureLines(limit: 5).joined(separator: "; "))
        } catch .planning(let error), .applying(let error) {
            throw CommandFailure.input(
                "cannot make the state \(base.name) declares in memory: \(tree?.naming("\(error)") ?? "\(error)")")
        }
        return (store, base)
    }
}
