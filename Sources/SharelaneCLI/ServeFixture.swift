import ArgumentParser
import ChildProcesses
import Emulator
import Foundation
import Lanes
import Logging
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneFixture

/// `serve` as a test fixture (Docs/Testing.md): seeded from a recipe before the first request, started from
/// a snapshot file and written to one on the way out, and wrapped around a test command.
struct FixtureOptions: ParsableArguments {
    @Option(
        name: .customLong("recipe"),
        help: ArgumentHelp(
            "Seed the store from this recipe before answering: its users, zones, records, shares, acceptances.",
            discussion:
                "Applied in the recipe's container and environment; the state after seeding (and --lane) is what "
                + "POST /_sharelane/reset goes back to. A recipe that does not validate stops serve with its "
                + "FILE:LINE:COLUMN errors.",
            valueName: "file"),
        completion: .file(extensions: ["yaml", "yml"]))
    var recipes: [String] = []

    /// The one recipe to seed from (a second `--recipe` is refused, never ignored).
    var recipe: String? { recipes.last }

    @Option(
        name: .customLong("lane"),
        help: ArgumentHelp("Run this lane of --recipe after applying it (repeatable, in order).", valueName: "name"))
    var lanes: [String] = []

    @OptionGroup var recipeSelection: RecipeSelection

    @Option(
        name: .customLong("import"),
        help: ArgumentHelp(
            "Start from a snapshot file (--export-on-exit writes one), before seeding.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var importFile: String?

    @Option(
        name: .customLong("export-on-exit"),
        help: ArgumentHelp(
            "Write every container and environment to a snapshot file when serve stops.", valueName: "file"))
    var exportOnExit: String?

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp(
            "After --: a command to run against the seeded emulator; serve stops when it ends and exits with its "
                + "status.",
            valueName: "command"))
    var command: [String] = []

    @Option(
        help: ArgumentHelp(
            "How long the command after -- has to end once a signal was passed on to it (default 10s).",
            discussion:
                "SIGINT, SIGTERM and SIGHUP sent to serve are passed on to the command's process group; what is "
                + "still running after this long is killed.",
            valueName: "duration"))
    var grace: String?

    /// `--grace` in seconds.
    var graceSeconds: Double {
        get throws {
            guard let grace else { return 10 }
            guard let seconds = DurationText.seconds(grace), seconds >= 0 else {
                throw ValidationError("--grace takes a duration such as 10s, 500ms or 1m, not '\(grace)'")
            }
            return seconds
        }
    }

    func validate() throws {
        _ = try graceSeconds
        if recipes.count > 1 {
            throw ValidationError(
                "--recipe is given \(recipes.count) times (" + recipes.map { "'\($0)'" }.joined(separator: ", ")
                    + "); serve seeds one recipe: make one that includes the others (include:), or run one serve "
                    + "a recipe")
        }
        if !lanes.isEmpty, recipe == nil {
            throw ValidationError("--lane runs a lane of --recipe: give the recipe with --recipe FILE")
        }
        if (!recipeSelection.variables.isEmpty || !recipeSelection.variableFiles.isEmpty), recipe == nil {
            throw ValidationError("--var and --var-file set the variables of --recipe: give the recipe with --recipe")
        }
    }

    /// Puts the snapshot file in place, then seeds from the recipe and its lanes, and makes that the reset
    /// point. Prints the recipe's errors (or a failed lane's) and exits 1 when seeding cannot be done.
    func prepare(_ emulator: CloudKitEmulator, worlds: any StoreWorlds, logger: Logger) async throws -> Seeded? {
        if let importFile {
            do {
                try await emulator.importSnapshot(try Data(contentsOf: URL(fileURLWithPath: importFile)))
            } catch let error as ShareError {
                throw CommandFailure.input("cannot import \(importFile): \(error.reason)")
            } catch {
                throw CommandFailure.input("cannot read the snapshot file \(importFile): \(error.localizedDescription)")
            }
        }
        guard let recipe else {
            try await emulator.markResetPoint()
            return nil
        }
        let overrides = try recipeSelection.overrides()
        let reload = recipeSelection.reloader(path: recipe)
        let loaded: Recipe
        do {
            loaded = try reload(overrides)
            RecipeSelection.printWarnings(of: loaded)
        } catch {
            Terminal.printError("\(error)")
            Terminal.printError("serve: not started: the recipe \(recipe) does not validate")
            throw ExitCode.failure
        }
        if !command.isEmpty, let clash = Self.variableClash(loaded.users) {
            Terminal.printError("\(recipe):\(clash.location.line):\(clash.location.column): error: \(clash.message)")
            Terminal.printError("serve: not started: seeding from \(recipe) stopped")
            throw ExitCode.failure
        }
        let output = LaneOutput { Terminal.printError($0) }
        let seeded: (world: StoreWorld, users: [FixtureUser])
        do {
            seeded = try await FixtureSeeder(worlds: worlds, output: output, logger: logger).seed(
                loaded, lanes: lanes, reload: reload, overrides: overrides)
        } catch let error as LaneError {
            Terminal.printError("\(error)")
            Terminal.printError("serve: not started: seeding from \(recipe) failed")
            throw ExitCode.failure
        } catch {
            Terminal.printError("error: \(error)")
            Terminal.printError("serve: not started: seeding from \(recipe) failed")
            throw ExitCode.failure
        }
        try await emulator.markResetPoint(users: [seeded.world: seeded.users])
        return Seeded(world: seeded.world, users: seeded.users, recipe: recipe)
    }

    /// What seeding left: the world and its people.
    struct Seeded: Sendable {
        var world: StoreWorld
        var users: [FixtureUser]
        var recipe: String
    }

    /// Writes the snapshot file of `--export-on-exit`, if asked for.
    func exportIfAsked(_ emulator: CloudKitEmulator) async throws {
        guard let exportOnExit else { return }
        do {
            try PrivateFile.replace(exportOnExit, with: try await emulator.exportSnapshot())
            Terminal.printError("serve: wrote every container and environment to \(exportOnExit)")
        } catch {
            throw CommandFailure.input("cannot write the snapshot file \(exportOnExit): \(error)")
        }
    }

    /// The environment a wrapped command runs in: the process's own, and the fixture's (Docs/Testing.md).
    static func commandEnvironment(
        baseURL: String, apiToken: String, world: StoreWorld, users: [FixtureUserToken], usersFile: String
    ) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SHARELANE_URL"] = baseURL
        environment["SHARELANE_STORE"] = baseURL
        environment[Credentials.apiTokenVariable] = apiToken
        environment["CLOUDKIT_CONTAINER"] = world.container
        environment["CLOUDKIT_ENVIRONMENT"] = world.environment.rawValue
        environment["SHARELANE_USERS"] = usersFile
        for user in users { environment["SHARELANE_WEB_AUTH_TOKEN_" + variableName(user.handle)] = user.webAuthToken }
        return environment
    }

    /// Two of the recipe's people whose tokens would land in one variable, the second of them hiding the first:
    /// the later one's place and the message that names both.
    static func variableClash(_ users: [DeclaredUser]) -> (location: SourceLocation, message: String)? {
        var seen: [String: String] = [:]
        for user in users {
            let name = "SHARELANE_WEB_AUTH_TOKEN_" + variableName(user.handle)
            if let first = seen[name] {
                return (
                    user.location,
                    "the users '\(first)' and '\(user.handle)' would both have their token in \(name), and the "
                        + "command would see one of them: rename one of them"
                )
            }
            seen[name] = user.handle
        }
        return nil
    }

    /// A handle as an environment variable's name: upper case, anything but letters and digits as `_`.
    static func variableName(_ handle: String) -> String {
        String(handle.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }

    /// Runs the command, as it is (found on `PATH`, never through a shell), in a process group of its own, with
    /// the fixture in its environment. `child` is made beforehand so that a signal that comes while serve gets
    /// ready is passed on (or stops it from starting).
    /// - Returns: its exit status, 128 + N when signal N ended it, and never 0 when a signal was passed on to
    ///   it: a cancelled test run does not pass. 127 when there is no such program, 126 when it cannot run.
    static func run(_ child: ChildProcess) async -> Int32 {
        let finished: ChildProcess.Finished
        do {
            finished = try await child.run(input: .inheritedUnlessTerminal, output: .inherited)
        } catch let failure as ChildProcess.LaunchFailure {
            Terminal.printError("sharelane serve: \(failure)")
            return failure.notFound ? 127 : 126
        } catch {
            Terminal.printError("sharelane serve: cannot run \(child.arguments.first ?? ""): \(error)")
            return 126
        }
        if let signal = finished.stoppedWith, finished.status == 0 { return 128 + signal }
        return finished.status
    }
}
