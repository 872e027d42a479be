import ArgumentParser
import Foundation
import Logging
import Recipe
import ShareKit
import SharingReport

extension AccessFormat: ExpressibleByArgument {}

/// `sharelane access`: who can see and change what, now, as a matrix of users × shares.
struct AccessCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "access",
        abstract: "Show who can see and change what: users × shared zones and hierarchies.",
        discussion: """
            Reads the live store and prints a matrix: a row per user, a column per share (a zone shared whole, \
            or a hierarchy as ZONE/ROOT), each cell the right the access rules give that user now: owner, \
            administrator, write, read or none, with pending and removed participants marked \
            ("none (pending: read)") and rights from a public share marked "(public)". A local store shows \
            every user; an http: or cloudkit: store, which cannot list its users, the recipe's users. The \
            recipe (RECIPE, else Recipes/sharelane.yaml or sharelane.yaml when there is one) names the users \
            by handle and gives the container and environment. Reading changes nothing.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane access",
        "sharelane access --as bob --zone FamilyLists",
        "sharelane access --format html --out access.html",
        "sharelane access --format json | jq '.cells[] | select(.access != \"none\")'",
    ]

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "Only this user's row: a handle, an email address or a user record name.", valueName: "user"))
    var user: UserArgument?

    @Option(help: ArgumentHelp("Only the shares of the zone with this name.", valueName: "name"))
    var zone: String?

    @Option(help: "text (default; colour on a terminal), markdown, json or html (a page that needs nothing else).")
    var format: AccessFormat = .text

    @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var out: String?

    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var world: WorldOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.access")
        let loaded = try recipeSelection.loadIfAny(recipe)
        let store = try storeOptions.open(
            for: loaded, container: world.container, environment: world.environment, reading: true, logger: logger)
        let snapshot = try await StoreUsers.snapshot(of: store, recipe: loaded, asking: user?.text)
        var matrix = AccessMatrix(snapshot).narrowed(toUser: user?.text, zone: zone)
        if let user, matrix.rows.isEmpty { throw user.unknown(in: store.displayName, recipe: loaded) }
        if let zone, matrix.columns.isEmpty {
            Terminal.printError("No share in a zone named \(zone) in \(store.displayName).")
        }
        if matrix.rows.isEmpty, matrix.columns.isEmpty {
            matrix = AccessMatrix(SharingSnapshot(users: [], shares: []))
        }
        let title =
            "Access in \(store.worldName) — \(Self.count(matrix.rows.count, "user")) × \(Self.count(matrix.columns.count, "share"))"
        let style = format == .text && out == nil ? await Terminal.accessStyle() : .plain
        let text = AccessMatrixRenderer(style: style).render(matrix, format: format, title: title)
        try OutputFile.write(text, to: out) { "Wrote the access matrix (\(format.rawValue)) to \($0)." }
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

}
