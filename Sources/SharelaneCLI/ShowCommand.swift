import ArgumentParser
import Foundation
import Logging
import ShareKit
import Recipe
import ShareStoreSQLite
import SharingReport

/// `sharelane show`: the live store as a tree, as one user sees it.
struct ShowCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the live store as a tree: zones, records, shares and participants.",
        discussion: """
            With --as, shows what that user sees: their private database, the zones others shared with them \
            and they accepted (shared database), and the public database. --as takes a handle of the recipe \
            (bob), an email address (bob@example.com) or, on a local store, a user record name (_7d1f…). \
            Without --as, a local store shows every user's private database, then the public database; an \
            http: or cloudkit: store, which cannot list its users, shows the recipe's users. The recipe is \
            --recipe FILE, else Recipes/sharelane.yaml, else sharelane.yaml; its container and environment \
            are the ones an http: or cloudkit: store shows.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane show",
        "sharelane show --as bob --database shared",
        "sharelane show --zone FamilyLists --store http://127.0.0.1:8420",
    ]

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var world: WorldOptions
    @OptionGroup var logging: LoggingOptions

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "The user to show the store as: a handle of the recipe, an email address or a user record name.",
            valueName: "user"))
    var user: UserArgument?

    @Option(help: "Show only this database: private, shared or public.")
    var database: DatabaseScope?

    @Option(help: "Show only the zone with this name.")
    var zone: String?

    @Option(
        help: """
            tree (default), json (the users and shares with their participants, for scripts), dot or mermaid \
            (the sharing graph: owners → zones and hierarchy roots → participants).
            """)
    var format: ShowFormat = .tree

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    @OptionGroup var recipeSelection: RecipeSelection

    func run() async throws {
        let logger = Logger(label: "sharelane.show")
        let loaded = try recipeSelection.loadIfAny(recipe)
        let store = try storeOptions.open(
            for: loaded, container: world.container, environment: world.environment, reading: true, logger: logger)
        if format != .tree {
            let snapshot = try await Self.sharingSnapshot(of: store, recipe: loaded, user: user, zone: zone)
            Terminal.write(format.render(snapshot, title: "Sharing in \(store.displayName)"))
            return
        }
        let renderer = StoreTreeRenderer(store: store, zoneFilter: zone)
        var lines: [String] = []
        if let user {
            // Showing reads: only a user the store has is signed in.
            let resolved = try await user.user(
                in: store, recipe: loaded,
                hint: world.otherWorldsHint(store, recipe: loaded, storeURL: storeOptions.url))
            lines.append(
                "Store \(store.worldName), as \(resolved.email ?? resolved.recordName) (\(resolved.recordName))")
            for scope in database.map({ [$0] }) ?? DatabaseScope.allCases {
                lines += try await renderer.render(scope, as: resolved.recordName)
            }
        } else {
            let users = try await StoreUsers.list(in: store, recipe: loaded).map {
                User(recordName: $0.recordName, email: $0.email, name: $0.name)
            }
            if store is any LocalWorldStore, users.isEmpty, try await renderer.isPublicEmpty() {
                let hint = world.otherWorldsHint(store, recipe: loaded, storeURL: storeOptions.url)
                Terminal.write(
                    "The store \(store.worldName) is empty\(hint). Apply a recipe with `sharelane apply` to fill it.\n")
                return
            }
            lines.append("Store \(store.worldName): \(users.count) user\(users.count == 1 ? "" : "s")")
            let scopes = database.map { [$0] } ?? [.private, .public]
            for user in users where scopes.contains(.private) || scopes.contains(.shared) {
                lines.append("")
                lines.append(
                    "user \(user.email ?? user.recordName) (\(user.recordName))\(user.name.map { ", \($0)" } ?? "")")
                for scope in scopes where scope != .public {
                    lines += try await renderer.render(scope, as: user.recordName).map { "  " + $0 }
                }
            }
            if scopes.contains(.public), let anyone = users.first?.recordName {
                let publicLines = try await renderer.render(.public, as: anyone)
                if !publicLines.isEmpty {
                    lines.append("")
                    lines += publicLines
                }
            }
        }
        // Names and values come from the store: none may rewrite the terminal.
        Terminal.write(lines.map { DisplayText.escaped($0) }.joined(separator: "\n") + "\n")
    }

    /// The shares of the store, narrowed to those `user` owns or takes part in and to the zone `zone`.
    /// - Throws: `CommandFailure` when `user` names no user of the store.
    static func sharingSnapshot(of store: any Store, recipe: Recipe?, user: UserArgument?, zone: String?) async throws
        -> SharingSnapshot
    {
        var snapshot = try await StoreUsers.snapshot(of: store, recipe: recipe).narrowed(toZone: zone)
        if let user {
            guard let found = snapshot.users.first(where: user.names) else {
                throw user.unknown(in: store.displayName, recipe: recipe)
            }
            snapshot.shares.removeAll {
                $0.zoneID.ownerRecordName != found.recordName && $0.participant(found.recordName) == nil
            }
        }
        return snapshot
    }
}

extension DatabaseScope: ExpressibleByArgument {}

/// How `show` prints: the tree, or the sharing data for scripts and diagrams.
enum ShowFormat: String, CaseIterable, ExpressibleByArgument {
    case tree, json, dot, mermaid

    /// The snapshot in this format (not `tree`, which reads records too).
    func render(_ snapshot: SharingSnapshot, title: String) -> String {
        switch self {
        case .json, .tree: SharingSnapshotJSON.render(snapshot)
        case .dot: SharingGraphRenderer().dot(SharingGraph(snapshot), title: title)
        case .mermaid: SharingGraphRenderer().mermaid(SharingGraph(snapshot))
        }
    }
}
