import ArgumentParser
import CloudKitWire
import Foundation
import Logging
import Planner
import Recipe
import ShareStoreSQLite
import ShareKit

/// `sharelane export`: the live state as a recipe that plans to no changes.
struct ExportCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the live state as a recipe; planning it against the same store shows no changes.",
        discussion: """
            Exports the owner's zones (or those named with --zone), their records, shares and participants, and \
            the public database's records. --owner takes an email address, or a handle of the recipe \
            (Recipes/sharelane.yaml, then sharelane.yaml, or --recipe); without --owner, every owner the recipe \
            names, each zone with its `owner:` (two owners' zones of one name are refused: export each owner with \
            --owner).
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane export --out exported.yaml",
        "sharelane export --owner bob --zone FamilyLists --store http://127.0.0.1:8420",
    ]

    @Option(
        help: ArgumentHelp(
            "Whose private database to export: an email address, a recipe handle, or the handle an export wrote.",
            valueName: "handle-or-email"))
    var owner: String?

    @Option(name: .customLong("zone"), help: ArgumentHelp("Export only this zone (repeatable).", valueName: "zone"))
    var zones: [String] = []

    @Option(help: ArgumentHelp("Write the recipe to this file instead of standard output.", valueName: "file"))
    var out: String?

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    @Option(help: "The exported recipe's name.")
    var name: String = "exported"

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Name the recipe's users by its handles (alice, bob), so the export fits its lanes; the default when a "
                + "recipe is found. --no-keep-handles makes handles from email addresses."))
    var keepHandles: Bool?

    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var world: WorldOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.export")
        let (owner, loaded) = try ownerEmail()
        if keepHandles == true, loaded == nil {
            throw CommandFailure.usage(
                "--keep-handles needs the recipe whose handles to keep: pass --recipe FILE, or drop --keep-handles")
        }
        // The recipe's own handles by email address: an export that renamed `maya` would no longer fit the
        // lanes written for her.
        let kept = keepHandles == false ? [:] : loaded?.handlesByEmail ?? [:]
        // The recipe's container and environment, when a recipe names the owner: http: and cloudkit: stores
        // address them, and the exported recipe names them so that it plans against the same place.
        // A store URL that names its container (cloudkit:CONTAINER/ENVIRONMENT) wins over the recipe's.
        let store = try storeOptions.open(
            for: loaded, container: world.container, environment: world.environment, reading: true, logger: logger)
        // A local store opened with no recipe is the container its file holds: the export names that one.
        let named = (store as? any ServiceStore)?.endpoint
        let local = (store as? any LocalWorldStore)?.world
        let container =
            named?.container ?? world.container ?? loaded?.container ?? local?.container ?? Recipe.defaultContainer
        let environment =
            named?.environment ?? world.environment?.rawValue ?? loaded?.environment.rawValue
            ?? local?.environment.rawValue ?? CloudKitEnvironment.development.rawValue
        // Without --owner, every owner the recipe names: each zone with its owner.
        let otherOwners =
            self.owner == nil ? (loaded?.owners.dropFirst().compactMap { loaded?.user($0)?.email } ?? []) : []
        let yaml = try await Self.exportedRecipe(
            from: store, owner: owner, otherOwners: otherOwners, zones: zones, name: name, container: container,
            environment: environment,
            out: out, logger: logger, hint: world.otherWorldsHint(store, recipe: loaded, storeURL: storeOptions.url),
            keptHandles: kept)
        try OutputFile.write(yaml, to: out) {
            "Wrote \($0); `sharelane plan \($0)` shows no changes against \(store.displayName)."
        }
    }

    /// The live state of `owner`'s zones (all, or those in `zones`) and public records as a recipe named `name`
    /// for `container` and `environment`, its assets downloaded beside `out` when given, the users with an
    /// address in `keptHandles` under those handles: what `export` writes, and what `init --from-store` starts
    /// from.
    /// - Throws: `CommandFailure` naming the store and what failed.
    static func exportedRecipe(
        from store: any Store, owner: Owner, otherOwners: [String] = [], zones: [String], name: String,
        container: String, environment: String, out: String?, logger: Logger, hint: String = "",
        keptHandles: [String: String] = [:]
    ) async throws -> String {
        do {
            let email = try await owner.email(in: store, hint: hint)
            // An export reads: it signs in only a user the store has.
            guard let user = try await store.signInExisting(email: email) else {
                throw CommandFailure.input(
                    "\(store.worldName) has no user \(email), so there is nothing of theirs to export\(hint); check "
                        + "--owner")
            }
            // With --out, assets are downloaded beside the recipe and written `!asset PATH`.
            let assets = out.map { out in
                ExportAssets(directory: (out as NSString).deletingLastPathComponent) { asset in
                    if let web = store as? any DownloadsAssets { return try await web.downloadAsset(asset) }
                    guard asset.location.isEmpty else { return nil }
                    return try await (store as? any KeepsAssetBytes)?.assetBytes(checksum: asset.checksum)
                }
            }
            var others: [User] = []
            for email in otherOwners {
                // An owner the store does not have yet owns nothing.
                if let other = try await store.signInExisting(email: email) { others.append(other) }
            }
            return try await Exporter(store: store, logger: logger).export(
                owner: user, otherOwners: others, zones: zones, name: name, container: container,
                environment: environment,
                assets: assets, keptHandles: keptHandles)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.store("cannot export from \(store.displayName): \(error)")
        }
    }

    /// Whose private database to export: an email address, or a handle that neither `--owner`'s form nor a
    /// recipe turns into one, read as the handle `export` writes (`mia` for `mia@example.com`).
    enum Owner {
        case email(String)
        case exportedHandle(String)

        /// The email address, looking an exported handle up among the store's users (local stores only).
        /// - Throws: `CommandFailure` when no user, or more than one, has that handle.
        func email(in store: any Store, hint: String = "") async throws -> String {
            switch self {
            case .email(let email):
                return email
            case .exportedHandle(let handle):
                guard let local = store as? any UserListing else {
                    throw CommandFailure.usage(
                        "--owner \(handle) is a handle, but no recipe names it and \(store.displayName) cannot list its users: pass an email address, or --recipe FILE"
                    )
                }
                let emails = try await local.allUsers().compactMap(\.email).filter {
                    ExportedUsers.baseHandle(email: $0) == handle
                }
                guard emails.count == 1, let email = emails.first else {
                    throw CommandFailure.input(
                        emails.isEmpty
                            ? "--owner \(handle): no recipe names it and \(store.worldName) has no user exported as \(handle)\(hint); pass an email address"
                            : "--owner \(handle) could be \(emails.joined(separator: " or ")); pass the email address"
                    )
                }
                return email
            }
        }
    }

    /// The owner, and the recipe that names the handles, if there is one.
    private func ownerEmail() throws -> (Owner, Recipe?) {
        if let owner, owner.contains("@") {
            // A recipe, when there is one, still gives the container and environment.
            let path = try? RecipeSelection.resolve(recipe)
            return (.email(owner), path.flatMap { try? recipeSelection.load($0) })
        }
        let path: String
        do {
            path = try RecipeSelection.resolve(recipe)
        } catch {
            guard let owner else {
                throw CommandFailure.usage("export needs --owner EMAIL (or a recipe whose owner it exports)")
            }
            return (.exportedHandle(owner), nil)
        }
        let loaded = try recipeSelection.load(path)
        let handle = owner ?? loaded.owner
        guard let user = loaded.user(handle) else {
            // Not the recipe's: the handle an earlier export wrote.
            return (.exportedHandle(handle), loaded)
        }
        return (.email(user.email), loaded)
    }
}
