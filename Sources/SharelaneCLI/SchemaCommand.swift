import ArgumentParser
import Foundation
import Logging
import Recipe
import ShareKit

extension CloudKitEnvironment: ExpressibleByArgument {}

/// `sharelane schema`: record types, fields and indexes as CloudKit keeps them (Docs/Schema.md).
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Show, export, compare and deploy schemas: record types, fields and indexes.",
        discussion: """
            A field's type is fixed once written; development creates types and fields as records are saved; \
            production holds only what was deployed. The container and environment come from the recipe \
            (RECIPE, else Recipes/sharelane.yaml or sharelane.yaml when there is one); --environment overrides.
            """,
        subcommands: [
            SchemaShowCommand.self, SchemaExportCommand.self, SchemaDiffCommand.self, SchemaDeployCommand.self,
        ]
    )
}

/// How a schema is written: the CloudKit Schema Language or JSON.
enum SchemaFormat: String, ExpressibleByArgument, CaseIterable {
    case ckdb, json

    func render(_ schema: Schema) throws -> String {
        switch self {
        case .ckdb: return SchemaLanguage.text(schema)
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try encoder.encode(schema), as: UTF8.self) + "\n"
        }
    }
}

/// What the schema commands share: the recipe, the store, and the user they read as.
struct SchemaContext {
    let recipe: Recipe?
    let store: any Store
    /// The user requests go as: the recipe's owner where the store has them (a remote store answers
    /// signed-in users only; a local one anyone).
    let user: UserRecordName

    /// Opens the store for the recipe, in `environment` (else the recipe's).
    static func open(
        recipe: Recipe?, environment: CloudKitEnvironment?, storeOptions: StoreOptions, logger: Logger,
        signIn: Bool = false
    ) async throws -> SchemaContext {
        let store = try storeOptions.open(for: recipe, environment: environment, logger: logger)
        guard store.capabilities.keepsSchema else {
            throw CommandFailure.store(
                "\(store.displayName) does not serve schemas over Web Services: export Apple's with `xcrun cktool "
                    + "export-schema`, import a .ckdb from `sharelane schema export` with `xcrun cktool import-schema`, "
                    + "and deploy in the CloudKit Console")
        }
        var user: UserRecordName = ""
        if let owner = recipe?.user(recipe?.owner ?? "") {
            do {
                user =
                    signIn
                    ? try await store.signIn(email: owner.email, name: owner.name).recordName
                    : try await store.signInExisting(email: owner.email)?.recordName ?? ""
            } catch {
                throw CommandFailure.store("cannot sign in to \(store.displayName) as \(owner.handle): \(error)")
            }
        }
        return SchemaContext(recipe: recipe, store: store, user: user)
    }

    /// The live schema of an environment.
    /// - Throws: `CommandFailure` naming the store.
    func live(_ environment: CloudKitEnvironment) async throws -> Schema {
        do {
            return try await store.schema(in: environment, as: user)
        } catch {
            throw CommandFailure.store(
                "cannot read the \(environment.rawValue) schema of \(store.displayName): \(error)")
        }
    }
}

struct SchemaShowCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print the live schema of the store, in the CloudKit Schema Language.")

    static let examples = [
        "sharelane schema show", "sharelane schema show --environment production",
        "sharelane schema show --store http://127.0.0.1:8420 --format json",
    ]

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }
    @Option(help: "development or production (default: the recipe's).")
    var environment: CloudKitEnvironment?
    @Option(help: "ckdb (default) or json.")
    var format: SchemaFormat = .ckdb
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.schema")
        let loaded = try recipeSelection.loadIfAny(recipe)
        let context = try await SchemaContext.open(
            recipe: loaded, environment: environment, storeOptions: storeOptions, logger: logger)
        let env = environment ?? loaded?.environment ?? .development
        let schema = try await context.live(env)
        if format == .ckdb {
            Terminal.write(
                "// The \(env.rawValue) schema of \(context.store.displayName): "
                    + "\(schema.recordTypes.count) record type\(schema.recordTypes.count == 1 ? "" : "s").\n")
        }
        Terminal.write(try format.render(schema))
    }
}

struct SchemaExportCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the recipe's schema (declared or inferred), or with --live the store's.",
        discussion: """
            The .ckdb form is the CloudKit Schema Language, which `xcrun cktool import-schema` reads. Without \
            --live the store is not read.
            """)

    static let examples = [
        "sharelane schema export Recipes/fasting.yaml --out Recipes/fasting.ckdb",
        "sharelane schema export --live --environment production --format json",
    ]

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }
    @Flag(help: "Export the store's live schema instead of the recipe's.")
    var live = false
    @Option(help: "With --live: development or production (default: the recipe's).")
    var environment: CloudKitEnvironment?
    @Option(help: "ckdb (default) or json.")
    var format: SchemaFormat = .ckdb
    @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var out: String?
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.schema")
        let schema: Schema
        if live {
            let loaded = try recipeSelection.loadIfAny(recipe)
            let context = try await SchemaContext.open(
                recipe: loaded, environment: environment, storeOptions: storeOptions, logger: logger)
            schema = try await context.live(environment ?? loaded?.environment ?? .development)
        } else {
            schema = try recipeSelection.load(
                try RecipeSelection.resolve(recipe), nothingDone: "nothing was exported"
            ).schema.schema
        }
        try OutputFile.write(try format.render(schema), to: out) { "Wrote the schema (\(format.rawValue)) to \($0)." }
    }
}

struct SchemaDiffCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two schemas: each a recipe, a .ckdb file, or live:development / live:production.",
        discussion: """
            Lists what turns A into B (`+` added, `-` removed, `~` changed). With --detailed-exitcode: 0 the \
            same, 2 different, 1 an error. live: schemas are read from --store for the container of --recipe \
            (else Recipes/sharelane.yaml or sharelane.yaml when there is one).
            """)

    static let examples = [
        "sharelane schema diff live:production live:development",
        "sharelane schema diff Recipes/fasting.ckdb Recipes/fasting.yaml --detailed-exitcode",
    ]

    @Argument(help: "The schema before: a recipe, a .ckdb file, live:development or live:production.")
    var a: String
    @Argument(help: "The schema after.")
    var b: String
    @Option(help: ArgumentHelp("The recipe that gives the container and owner for live: schemas.", valueName: "file"))
    var recipe: String?
    @Flag(help: "Exit 0 when the schemas are the same, 2 when they differ, 1 on error.")
    var detailedExitcode = false
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.schema")
        var context: SchemaContext?
        func schema(_ source: String) async throws -> Schema {
            if source.hasPrefix("live:") {
                guard let environment = CloudKitEnvironment(rawValue: String(source.dropFirst(5))) else {
                    throw CommandFailure.usage("'\(source)' is not live:development or live:production")
                }
                if context == nil {
                    context = try await SchemaContext.open(
                        recipe: try recipeSelection.loadIfAny(recipe), environment: environment,
                        storeOptions: storeOptions, logger: logger)
                }
                guard let context else { throw CommandFailure.store("cannot open the store") }
                return try await context.live(environment)
            }
            if source.hasSuffix(".ckdb") {
                let text: String
                do {
                    text = try String(contentsOfFile: source, encoding: .utf8)
                } catch {
                    throw CommandFailure.input("cannot read \(source): \(error.localizedDescription)")
                }
                do {
                    return try SchemaLanguage.schema(from: text, file: source)
                } catch {
                    for problem in error.errors { Terminal.printError(problem.description) }
                    throw ExitCode.failure
                }
            }
            // An environment's name alone is a file to the shell, and none exists: say the form meant.
            if CloudKitEnvironment(rawValue: source) != nil, !FileManager.default.fileExists(atPath: source) {
                throw CommandFailure.usage(
                    "'\(source)' is no file: the live schema of the store's \(source) environment is "
                        + "live:\(source) (`sharelane schema diff live:production live:development`)")
            }
            return try recipeSelection.load(source, nothingDone: "nothing was compared").schema.schema
        }
        let before = try await schema(a)
        let after = try await schema(b)
        let changes = SchemaRules.changes(from: before, to: after)
        if changes.isEmpty {
            Terminal.write("No differences: \(a) and \(b) hold the same schema.\n")
            return
        }
        Terminal.write("From \(a) to \(b):\n\n")
        for change in changes { Terminal.write("  \(change)\n") }
        let refused = changes.filter { !$0.isAdditive }.count
        Terminal.write(
            "\n\(changes.count) difference\(changes.count == 1 ? "" : "s")"
                + (refused > 0 ? "; \(refused) of them production would refuse (a removal or a type change)." : ".")
                + "\n")
        if detailedExitcode { throw ExitCode.changesPresent }
    }
}

struct SchemaDeployCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "deploy",
        abstract: "Promote development's schema to production, as the CloudKit Console's Deploy Schema Changes.",
        discussion: """
            Shows what production gains and asks for `yes` on a terminal; --yes skips the question, and is \
            required when standard input is not a terminal. Production is additive-only: a removed type or field, \
            or a changed type, refuses the whole deploy and changes nothing. Local stores and `sharelane serve` \
            only: Apple's is deployed in the CloudKit Console.
            """)

    static let examples = ["sharelane schema deploy --yes", "sharelane schema deploy Recipes/fasting.yaml --yes"]

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }
    @Flag(help: "Deploy without asking.")
    var yes = false
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.schema")
        let context = try await SchemaContext.open(
            recipe: try recipeSelection.loadIfAny(recipe), environment: .development, storeOptions: storeOptions,
            logger: logger, signIn: true)
        let development = try await context.live(.development)
        let production = try await context.live(.production)
        let changes: [SchemaChange]
        do {
            changes = try SchemaRules.deployment(development: development, production: production).changes
        } catch {
            throw CommandFailure.input("\(error.reason) (nothing was deployed)")
        }
        guard !changes.isEmpty else {
            Terminal.write(
                "No changes: production already holds development's schema (\(context.store.displayName)).\n")
            return
        }
        Terminal.write("Deploying to production in \(context.store.displayName):\n\n")
        for change in changes { Terminal.write("  \(change)\n") }
        if !yes {
            guard Terminal.stdinIsTerminal else {
                throw CommandFailure.usage(
                    "schema deploy needs --yes when standard input is not a terminal (nothing was deployed): review "
                        + "the changes, then run `sharelane schema deploy --yes`")
            }
            Terminal.write("\nProduction cannot take these back. Deploy? Only 'yes' will be accepted: ")
            guard readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
                Terminal.printError("Deploy cancelled; nothing was deployed.")
                throw ExitCode.failure
            }
        }
        let deployed: [SchemaChange]
        do {
            deployed = try await context.store.deploySchema(as: context.user)
        } catch {
            throw CommandFailure.store("deploying the schema to \(context.store.displayName) failed: \(error)")
        }
        Terminal.write("\nDeployed: \(deployed.count) change\(deployed.count == 1 ? "" : "s") to production.\n")
    }
}
