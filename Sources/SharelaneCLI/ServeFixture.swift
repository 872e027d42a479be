import ArgumentParser
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
        help: ArgumentHelp(
            "Seed the store from this recipe before answering: its users, zones, records, shares, acceptances.",
            discussion:
                "Applied in the recipe's container and environment; the state after seeding (and --lane) is what "
                + "POST /_sharelane/reset goes back to. A recipe that does not validate stops serve with its "
                + "FILE:LINE:COLUMN errors.",
            valueName: "file"),
        completion: .file(extensions: ["yaml", "yml"]))
    var recipe: String?

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

    func validate() throws {
        if !lanes.isEmpty, recipe == nil {
            throw ValidationError("--lane runs a lane of --recipe: give the recipe with --recipe FILE")
        }
        if (!recipeSelection.variables.isEmpty || !recipeSelection.variableFiles.isEmpty), recipe == nil {
            throw ValidationError("--var and --var-file set the variables of --recipe: give the recipe with --recipe")
        }
    }

    /// Puts the snapshot file in place, then seeds from the recipe and its lanes, and makes that the reset
    /// point. Prints the recipe's errors (or a failed lane's) and exits 1 when seeding cannot be done.
    func prepare(_ emulator: CloudKitEmulator, worlds: SQLiteWorlds, logger: Logger) async throws -> Seeded? {
        if let importFile {
            do {
                try await emulator.importSnapshot(try Data(contentsOf: URL(fileURLWithPath: importFile)))
            } catch let error as ShareError {
                throw CLIFailure("cannot import \(importFile): \(error.reason)")
            } catch {
                throw CLIFailure("cannot read the snapshot file \(importFile): \(error.localizedDescription)")
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
            try await emulator.exportSnapshot().write(to: URL(fileURLWithPath: exportOnExit), options: .atomic)
            Terminal.printError("serve: wrote every container and environment to \(exportOnExit)")
        } catch {
            throw CLIFailure("cannot write the snapshot file \(exportOnExit): \(error)")
        }
    }

    /// The environment a wrapped command runs in: the process's own, and the fixture's (Docs/Testing.md).
    static func commandEnvironment(
        baseURL: String, apiToken: String, world: StoreWorld, users: [FixtureUserToken], usersFile: String
    ) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SHARELANE_URL"] = baseURL
        environment["SHARELANE_STORE"] = baseURL
        environment["CLOUDKIT_API_TOKEN"] = apiToken
        environment["CLOUDKIT_CONTAINER"] = world.container
        environment["CLOUDKIT_ENVIRONMENT"] = world.environment.rawValue
        environment["SHARELANE_USERS"] = usersFile
        for user in users { environment["SHARELANE_WEB_AUTH_TOKEN_" + variableName(user.handle)] = user.webAuthToken }
        return environment
    }

    /// A handle as an environment variable's name: upper case, anything but letters and digits as `_`.
    static func variableName(_ handle: String) -> String {
        String(handle.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }

    /// Runs the command with the fixture in its environment; SIGINT and SIGTERM sent to serve reach it.
    /// - Returns: its exit status (128 + the signal's number when a signal ended it).
    static func run(_ command: [String], environment: [String: String]) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.environment = environment
        let ended = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { finished in
            let status = finished.terminationStatus
            ended.continuation.yield(finished.terminationReason == .uncaughtSignal ? 128 + status : status)
            ended.continuation.finish()
        }
        var forwarders: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                if process.isRunning { kill(process.processIdentifier, signalNumber) }
            }
            source.resume()
            forwarders.append(source)
        }
        defer {
            for source in forwarders { source.cancel() }
        }
        do {
            try process.run()
        } catch {
            throw CLIFailure("cannot run \(command.joined(separator: " ")): \(error.localizedDescription)")
        }
        var statuses = ended.stream.makeAsyncIterator()
        return await statuses.next() ?? 1
    }
}
