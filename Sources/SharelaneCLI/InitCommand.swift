import ArgumentParser
import CloudKitWire
import Foundation
import Logging
import Recipe
import ShareKit
import ShareStoreSQLite

/// `sharelane init`: a commented starter recipe in the current directory (or one that declares what a store
/// holds), `.sharelane/` in `.gitignore`, optionally a CI workflow that plans each pull request, and what to
/// run next.
struct InitCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a commented starter recipe, sharelane.yaml, in the current directory.",
        discussion: """
            The starter declares three users, a zone shared with one of them, and a lane whose expect steps \
            check who can see and change what: `sharelane plan` and `sharelane run check` work on it as \
            written. With --from-store, the recipe declares what the store holds instead (as `sharelane \
            export` writes it), with a lane that checks it. .sharelane/ (the local store and the plan cache) \
            is added to .gitignore, and the recipe starts with the line that gives editors the recipe's JSON \
            Schema. --ci github also writes a GitHub Actions workflow that comments each pull request with the \
            plan and runs the recipe's lanes (`sharelane test`), keeping their JUnit report. --recipe PATH names \
            the project's recipe where it is elsewhere: it is kept and no starter is written. In a project that has its recipe (Recipes/sharelane.yaml or sharelane.yaml), init keeps it and \
            adds only what is missing: the workflow, the .gitignore line, the schema line. --force writes the \
            recipe and the workflow again.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane init --name family-lists --container iCloud.com.example.Lists",
        "sharelane init --from-store http://127.0.0.1:8420 --owner alice@example.com",
        "sharelane init --ci github --recipe QA/basket.yaml",
    ]

    /// The recipe `init` writes, in the current directory.
    static let recipeFile = "sharelane.yaml"

    /// The line `init` adds to `.gitignore`: the local store, its lock and the plan cache live there.
    static let ignoredFolder = ".sharelane/"

    /// The CI systems `--ci` writes a workflow for.
    enum CISystem: String, ExpressibleByArgument, CaseIterable {
        case github
    }

    @Option(help: "The recipe's name (default: the current directory's name).")
    var name: String?

    @Option(
        help: ArgumentHelp(
            "The CloudKit container's identifier (default: iCloud.local.sharelane; cloudkit: needs yours).",
            valueName: "identifier"))
    var container: String?

    @Option(
        name: .customLong("from-store"),
        help: ArgumentHelp(
            "Start from what this store holds: sqlite:PATH (or a path), http://HOST:PORT or cloudkit:.",
            valueName: "url"))
    var fromStore: String?

    @Option(
        help: ArgumentHelp(
            "With --from-store: whose zones to start from, an email address (on a local store, the only user who owns a zone by default).",
            valueName: "email"))
    var owner: String?

    @Option(
        help: ArgumentHelp(
            "Also write a workflow that plans each pull request and runs the lanes: github.", valueName: "system"))
    var ci: CISystem?

    @Option(
        name: .customLong("recipe"),
        help: ArgumentHelp(
            "The project's recipe, when it is elsewhere than Recipes/sharelane.yaml or sharelane.yaml: kept, and "
                + "the one the workflow plans and tests; no starter is written.",
            valueName: "path"),
        completion: .file(extensions: ["yaml", "yml"]))
    var recipe: String?

    @Flag(help: "Write the recipe and the workflow again when they exist.")
    var force = false

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if owner != nil, fromStore == nil {
            throw ValidationError("--owner says whose zones --from-store starts from; pass --from-store URL too")
        }
        if let name, name.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--name needs a name for the recipe")
        }
        if recipe != nil, fromStore != nil {
            throw ValidationError(
                "--recipe names the project's recipe, which init keeps; --from-store writes a new one: pass one of them"
            )
        }
    }

    func run() async throws {
        let directory = FileManager.default.currentDirectoryPath
        // A project that has its recipe keeps it: init adds what is missing around it.
        let existing: String?
        if let recipe {
            guard FileManager.default.fileExists(atPath: recipe) else {
                throw CommandFailure.input(
                    "there is no recipe at \(recipe) (from \(directory)); nothing was written. Name the project's "
                        + "recipe, relative to the repository's root, or leave out --recipe for a starter")
            }
            existing = recipe
        } else {
            existing = force ? nil : RecipeSelection.defaultPaths.first { FileManager.default.fileExists(atPath: $0) }
        }
        if let existing, fromStore != nil {
            throw CommandFailure.conflict(
                "\(existing) exists in \(directory); nothing was written. Pass --force to replace it with the recipe --from-store makes, or run init in another directory"
            )
        }
        let recipePath = existing ?? Self.recipeFile
        var report: [String] = []
        if let existing {
            report.append(
                "Kept \(existing), the project's recipe"
                    + (recipe == nil ? " (--force writes a new one over it)." : "."))
        } else {
            let name = self.name ?? Self.defaultName(directory: directory)
            let recipe: String
            let summary: String
            if let fromStore {
                (recipe, summary) = try await recipeFromStore(fromStore, name: name)
            } else {
                recipe = StarterRecipe.yaml(name: name, container: container ?? Recipe.defaultContainer)
                summary = "recipe `\(name)`: three users, zone Notes shared with bob, lane \(StarterRecipe.laneName)"
            }
            try Self.write(recipe, to: Self.recipeFile)
            report.append("Wrote \(Self.recipeFile), \(summary).")
        }
        if ci == .github {
            if !force, FileManager.default.fileExists(atPath: GitHubPlanWorkflow.path) {
                report.append("Kept \(GitHubPlanWorkflow.path) (--force writes it again).")
            } else {
                try Self.write(
                    GitHubPlanWorkflow.yaml(
                        recipe: recipePath, version: GitHubPlanWorkflow.defaultRef,
                        reads: Self.filesRead(by: recipePath)),
                    to: GitHubPlanWorkflow.path)
                report.append(
                    "Wrote \(GitHubPlanWorkflow.path): each pull request that changes the recipe, or a file it reads, gets its plan as one comment, and its lanes run with `sharelane test`, their JUnit report kept as the run's artifact. Set the repository variable SHARELANE_REPOSITORY (sharelane's repository on GitHub, OWNER/NAME, which the workflow builds); to plan against a live store too, SHARELANE_STORE and the secrets the store needs (CLOUDKIT_API_TOKEN, CLOUDKIT_WEB_AUTH_TOKEN). The workflow's first lines say how."
                )
            }
        }
        if try Self.ignoreLocalState() {
            report.append(
                "Added \(Self.ignoredFolder) to .gitignore: the local store and the plan cache stay out of git.")
        }
        report += try schemaLine(in: recipePath)
        if report.allSatisfy({ $0.hasPrefix("Kept ") }) {
            report.append("Nothing to add: the project has everything init writes.")
        }
        Terminal.write(
            report.joined(separator: "\n") + "\n\nNext:\n"
                + nextSteps(keptRecipe: existing != nil).joined(separator: "\n") + "\n")
    }

    /// The files the recipe at `recipePath` reads besides itself — its includes, the `.env` files it looks for,
    /// its `!asset` files — relative to this folder (the repository's root, where the workflow goes); none when
    /// it does not load (`validate` says why).
    static func filesRead(by recipePath: String) -> [String] {
        guard let (_, inputs) = try? RecipeLoader().loadWithInputs(path: recipePath) else { return [] }
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.path + "/"
        let recipe = URL(fileURLWithPath: recipePath).standardizedFileURL.path
        return inputs.files.keys.compactMap { path in
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            guard absolute != recipe, absolute.hasPrefix(here) else { return nil }
            return String(absolute.dropFirst(here.count))
        }.sorted()
    }

    /// Writes the recipe's JSON Schema beside the recipe (`recipe.schema.json`, committed with it) and adds the
    /// line that gives it to editors (`# yaml-language-server: $schema=recipe.schema.json`) at the top of the
    /// recipe. The line names the file relative to the recipe, so that it resolves on every clone and in CI,
    /// never a path of the machine `init` ran on; a line an older `init` wrote with such a path is replaced.
    /// - Returns: what to say about it.
    private func schemaLine(in recipePath: String) throws -> [String] {
        var text: String
        do {
            text = try String(contentsOfFile: recipePath, encoding: .utf8)
        } catch {
            throw CommandFailure.input("cannot read \(recipePath): \(error.localizedDescription)")
        }
        let line = RecipeSchemaFile.modeline(RecipeSchemaFile.besideRecipe)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let existing = lines.firstIndex { $0.hasPrefix(RecipeSchemaFile.modelinePrefix) }
        if let existing, lines[existing] != line[...], !lines[existing].contains("$schema=/") {
            return ["Kept the recipe's own schema line (\(lines[existing]))."]
        }
        guard let schema = RecipeSchemaFile.find() else {
            return [
                "No recipe.schema.json was found beside sharelane, so the recipe has no schema line: `make install` installs it in PREFIX/share/sharelane/; then run `sharelane init` again for completion in editors."
            ]
        }
        var report: [String] = []
        let target = URL(fileURLWithPath: recipePath).deletingLastPathComponent()
            .appendingPathComponent(RecipeSchemaFile.besideRecipe).path
        let current = try Data(contentsOf: URL(fileURLWithPath: schema))
        // Said as the user would type it: from the folder init runs in.
        let here = FileManager.default.currentDirectoryPath + "/"
        let shown = target.hasPrefix(here) ? String(target.dropFirst(here.count)) : target
        let kept = FileManager.default.contents(atPath: target)
        if kept == nil || (force && kept != current) {
            try Self.write(String(decoding: current, as: UTF8.self), to: target)
            report.append("Wrote \(shown): the recipe's JSON Schema, for editors (commit it with the recipe).")
        } else if kept != current {
            report.append("Kept \(shown); it is not this sharelane's schema (--force writes it again).")
        }
        if let existing {
            guard lines[existing] != line[...] else { return report }
            var rewritten = lines
            rewritten[existing] = line[...]
            text = rewritten.joined(separator: "\n")
            try Self.write(text, to: recipePath)
            report.append("Made the schema line of \(recipePath) relative to it (it named a path of this machine).")
        } else {
            try Self.write(line + "\n" + text, to: recipePath)
            report.append(
                "Added the schema line to \(recipePath): editors with the YAML language server complete and check it.")
        }
        return report
    }

    /// The commands to run next, each with what it does.
    /// - Parameter keptRecipe: the project's own recipe was kept, the default one the commands find.
    func nextSteps(keptRecipe: Bool = false) -> [String] {
        // `Recipes/sharelane.yaml` comes first among the default recipes: name the new one when it is there.
        let shadowed = !keptRecipe && FileManager.default.fileExists(atPath: RecipeSelection.defaultPaths[0])
        let recipe = shadowed ? " \(Self.recipeFile)" : ""
        let store = fromStore.map { " --store \($0)" } ?? ""
        let steps: [(String, String)]
        if keptRecipe {
            // A recipe in no default place is named in every command.
            let named = self.recipe.map { " \($0)" } ?? ""
            steps = [
                ("sharelane validate\(named)", "checks the recipe, and that editors find its schema"),
                ("sharelane plan\(named)", "what apply would change in .sharelane/store.sqlite"),
                ("sharelane lanes\(named)", "the recipe's lanes, to run with `sharelane run LANE`"),
                ("sharelane test\(named)", "runs the lanes meant for CI, as the workflow does"),
            ]
        } else if fromStore != nil {
            steps = [
                ("sharelane plan\(recipe)\(store)", "no changes: the recipe declares what the store holds"),
                ("sharelane run \(StarterRecipe.laneName)\(recipe)\(store)", "checks that it still does"),
                ("sharelane access\(recipe)\(store)", "who can see and change what"),
            ]
        } else {
            steps = [
                ("sharelane plan\(recipe)", "what apply would change in .sharelane/store.sqlite"),
                (
                    "sharelane run \(StarterRecipe.laneName)\(recipe)",
                    "applies it; bob accepts and adds a note; checks who can see what"
                ),
                ("sharelane access\(recipe)", "who can see and change what"),
                ("sharelane serve", "a local CloudKit Web Services emulator, with a web console"),
            ]
        }
        let width = steps.map(\.0.count).max() ?? 0
        return steps.map { command, what in
            "  " + command + String(repeating: " ", count: width - command.count) + "   # " + what
        }
    }

    /// The recipe that declares what `url` holds, with a lane that checks it, and a summary of it.
    /// - Throws: `CommandFailure` when the store cannot be opened or read, or the owner cannot be chosen.
    private func recipeFromStore(_ url: String, name: String) async throws -> (recipe: String, summary: String) {
        let logger = Logger(label: "sharelane.init")
        let options = try StoreOptions.parse(["--store", url])
        let store = try options.open(for: nil, container: container, logger: logger)
        let endpoint = (store as? any ServiceStore)?.endpoint
        let owner = try await chooseOwner(in: store)
        let exported = try await ExportCommand.exportedRecipe(
            from: store, owner: owner, zones: [], name: name,
            container: container ?? endpoint?.container ?? (store as? any LocalWorldStore)?.world.container
                ?? Recipe.defaultContainer,
            environment: endpoint?.environment ?? (store as? any LocalWorldStore)?.world.environment.rawValue
                ?? CloudKitEnvironment.development.rawValue, out: nil, logger: logger)
        let loaded = try? RecipeLoader(overrides: [:]).load(yaml: exported, file: Self.recipeFile)
        let header = [
            "# Started by `sharelane init --from-store` from what \(store.displayName) held: `sharelane plan`",
            "# against that store shows no changes until one of them changes, and `sharelane run \(StarterRecipe.laneName)`",
            "# checks that the store still holds it. Every key is described in sharelane's Docs/RecipeFormat.md.",
        ]
        let recipe = header.joined(separator: "\n") + "\n" + exported + (loaded.map(StarterRecipe.checkLane) ?? "")
        let zones = loaded?.zones.count ?? 0
        let owned = (try? await owner.email(in: store)) ?? "the owner"
        return (recipe, "declaring what \(owned)'s \(zones) zone\(zones == 1 ? "" : "s") hold in \(store.displayName)")
    }

    /// `--owner`, or on a local store without it the only user whose private database has a zone.
    /// - Throws: `CommandFailure` when no single user can be chosen.
    private func chooseOwner(in store: any Store) async throws -> ExportCommand.Owner {
        if let owner { return owner.contains("@") ? .email(owner) : .exportedHandle(owner) }
        guard let local = store as? any LocalWorldStore else {
            throw CommandFailure.usage(
                "init --from-store \(store.displayName) needs --owner EMAIL: whose zones the recipe declares")
        }
        var owners: [String] = []
        for user in try await local.allUsers() {
            let zones = try await local.listZones(in: .private, as: user.recordName)
            if zones.contains(where: { $0.zoneID.zoneName != defaultZoneName }), let email = user.email {
                owners.append(email)
            }
        }
        guard owners.count == 1, let email = owners.first else {
            throw CommandFailure.input(
                owners.isEmpty
                    ? "\(store.displayName) holds no zone of anyone's; pass --owner EMAIL to start from a user's public records"
                    : "\(store.displayName) holds zones of \(owners.joined(separator: ", ")); pass --owner EMAIL to choose whose"
            )
        }
        return .email(email)
    }

    /// The current directory's name, as the recipe's name.
    static func defaultName(directory: String) -> String {
        let last = (directory as NSString).lastPathComponent
        return last.isEmpty || last == "/" ? "my-recipe" : last
    }

    /// Writes `text` to `path`, making its folders.
    /// - Throws: `CommandFailure` naming the file.
    static func write(_ text: String, to path: String) throws {
        do {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw CommandFailure.input("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Adds `.sharelane/` to `.gitignore` (creating it) unless a line already ignores the folder.
    /// - Returns: whether the line was added.
    /// - Throws: `CommandFailure` when `.gitignore` cannot be read or written.
    static func ignoreLocalState() throws -> Bool {
        let path = ".gitignore"
        var text = ""
        if FileManager.default.fileExists(atPath: path) {
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw CommandFailure.input("cannot read \(path): \(error.localizedDescription)")
            }
        }
        let ignores = [".sharelane", ".sharelane/", "/.sharelane", "/.sharelane/"]
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        if lines.contains(where: ignores.contains) { return false }
        if !text.isEmpty, !text.hasSuffix("\n") { text += "\n" }
        try write(text + ignoredFolder + "\n", to: path)
        return true
    }
}
