import ArgumentParser
import Foundation
import Logging
import Planner
import Recipe
import ShareKit

/// `sharelane export`: the live state as a recipe that plans to no changes.
struct ExportCommand: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the live state as a recipe; planning it against the same store shows no changes.",
        discussion: """
            Exports the owner's zones (or those named with --zone), their records, shares and participants, and \
            the public database's records. --owner takes an email address, or a handle of the recipe \
            (Recipes/sharelane.yaml, then sharelane.yaml, or --recipe); without --owner, the recipe's owner.
            """)

    @Option(
        help: ArgumentHelp(
            "Whose private database to export: an email address or a recipe handle.", valueName: "handle-or-email"))
    var owner: String?

    @Option(name: .customLong("zone"), help: ArgumentHelp("Export only this zone (repeatable).", valueName: "zone"))
    var zones: [String] = []

    @Option(help: ArgumentHelp("Write the recipe to this file instead of standard output.", valueName: "file"))
    var out: String?

    @Option(
        help: ArgumentHelp(
            "The recipe that names the handles (default: Recipes/sharelane.yaml, then sharelane.yaml).",
            valueName: "file"))
    var recipe: String?

    @Option(help: "The exported recipe's name.")
    var name: String = "exported"

    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.export")
        let (email, loaded) = try ownerEmail()
        // The recipe's container and environment, when a recipe names the owner: http: and cloudkit: stores
        // address them, and the exported recipe names them so that it plans against the same place.
        let container = loaded?.container ?? Recipe.defaultContainer
        let environment = loaded?.environment.rawValue ?? CloudKitEnvironment.development.rawValue
        let store = try storeOptions.open(for: loaded, logger: logger)
        let yaml: String
        do {
            // An export reads: it signs in only a user the store has.
            guard let user = try await store.signInExisting(email: email) else {
                throw CLIFailure(
                    "\(store.displayName) has no user \(email), so there is nothing of theirs to export; check --owner")
            }
            yaml = try await Exporter(store: store, logger: logger).export(
                owner: user, zones: zones, name: name, container: container, environment: environment)
        } catch let failure as CLIFailure {
            throw failure
        } catch {
            throw CLIFailure("cannot export from \(store.displayName): \(error)")
        }
        if let out {
            do {
                try yaml.write(toFile: out, atomically: true, encoding: .utf8)
            } catch {
                throw CLIFailure("cannot write \(out): \(error.localizedDescription)")
            }
            Terminal.printError("Wrote \(out); `sharelane plan \(out)` shows no changes against \(store.displayName).")
        } else {
            Terminal.write(yaml)
        }
    }

    /// The owner's email address, and the recipe that named it, if one did.
    private func ownerEmail() throws -> (String, Recipe?) {
        if let owner, owner.contains("@") {
            // A recipe, when there is one, still gives the container and environment.
            let path = try? RecipeSelection.resolve(recipe)
            return (owner, path.flatMap { try? recipeSelection.load($0) })
        }
        let path: String
        do {
            path = try RecipeSelection.resolve(recipe)
        } catch {
            throw CLIFailure(
                owner.map {
                    "--owner \($0) is a handle, but no recipe names it: pass an email address, or --recipe FILE"
                }
                    ?? "export needs --owner EMAIL (or a recipe whose owner it exports)")
        }
        let loaded = try recipeSelection.load(path)
        let handle = owner ?? loaded.owner
        guard let user = loaded.user(handle) else {
            throw CLIFailure(
                "\(path) names no user '\(handle)': pass --owner EMAIL, or one of \(loaded.users.map(\.handle).joined(separator: ", "))"
            )
        }
        return (user.email, loaded)
    }
}
