import ArgumentParser
import ChildProcesses
import CloudKitWire
import Emulator
import Foundation
import Logging
import ShareKit
import ServiceLifecycle
import ShareStoreSQLite
import SharelaneFixture

/// `sharelane serve`: a local CloudKit Web Services emulator over a SQLite store.
struct ServeCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a local CloudKit Web Services emulator over a store.",
        discussion: """
            Serves Apple's paths (/database/1/{container}/{environment}/{database}/…) with CloudKit's JSON, \
            error codes and access rules, over a SQLite store file, so data survives a restart. Sign in with \
            POST /auth/signin?ckAPIToken=… and {"emailAddress": …}. Point sharelane at it with \
            --store http://HOST:PORT and CLOUDKIT_API_TOKEN. Stops cleanly on Ctrl-C or SIGTERM. \
            See Docs/CloudKit.md.

            A read-only web console is served at / on the same address: the containers and environments \
            clients used, the users, each user's databases, zones, records and shares, the access matrix, \
            the sharing graph and the change history, each viewable as any user. Open the printed console \
            URL and give the API token once in its sign-in form; the browser then keeps a session cookie. \
            Nothing in the console changes data. See Docs/Console.md.

            serve answers only to the names 127.0.0.1, localhost, [::1] and --host (and those --allow-host \
            gives), so a web page of a name rebound to this machine cannot use it, and refuses any request of \
            a web page whose origin is not allowed (--allow-origin) before it does anything.

            To rehearse a bad network, as Apple's service is one (far away, throttling, now and then dropping a \
            connection after applying a write), give --latency, --throttle and --faults, and --fault-seed to \
            repeat a run; POST /_sharelane/faults changes them while serve runs. They apply to the Web Services \
            routes only, never to the console. See "Rehearsing a bad network" in Docs/CloudKit.md.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane serve --store sqlite:emulator.sqlite --port 8420 --api-token local-token",
        "sharelane serve --strict-tokens --server-key 1a2b3c=eckey.pub.pem --allow-origin https://app.example.test",
        "sharelane serve --latency 80ms~20ms --throttle 40/s --faults 'unavailable=5%,reset=2%,lost-answer=2%' "
            + "--fault-seed 7",
    ]

    @Option(
        help: ArgumentHelp(
            "The store file to serve: sqlite:PATH or a path (memory: keeps nothing).",
            discussion:
                "Defaults to $SHARELANE_STORE, then to sqlite:.sharelane/store.sqlite; with --recipe or --import, "
                + "to memory: (a fixture starts from its recipe or file alone).", valueName: "path"))
    var store: String?

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (default 8420; 0 picks a free one, as it does with a command after --).")
    var port: Int?

    @OptionGroup var fixture: FixtureOptions

    @Option(
        name: .customLong("api-token"),
        help: "The API token clients must send as ckAPIToken (default: a new random one, printed on start).")
    var apiToken: String?

    @Flag(
        name: .customLong("strict-tokens"),
        help: ArgumentHelp(
            "Make each web auth token good for one request, as Apple's reference says.",
            discussion:
                "By default a token stays good until it expires, as on the live service, though every answer "
                + "hands out a new one."))
    var strictTokens = false

    @Flag(
        name: .customLong("opaque-checksums"),
        help: ArgumentHelp(
            "Answer assets' fileChecksum as Apple's look: a digest the client cannot compute.",
            discussion:
                "By default serve answers its own fnv1a64:HEX of the bytes. With this flag a client meets what it "
                + "meets on Apple's service, and plans compare assets by the digests it remembers (Docs/CloudKit.md)."
        ))
    var opaqueChecksums = false

    @Option(
        name: .customLong("server-key"),
        help: ArgumentHelp(
            "Accept public-database requests signed with this server-to-server key (repeatable).",
            discussion:
                "KEY_ID=PATH: the key ID a client sends in X-Apple-CloudKit-Request-KeyID, and a PEM file with "
                + "the P-256 public key (openssl ec -in eckey.pem -pubout) or the private key.",
            valueName: "key-id=pem"))
    var serverKey: [String] = []

    @Option(
        name: .customLong("index-lag"),
        help: ArgumentHelp(
            "Make records/query see a write only this long after it (e.g. 2s), as CloudKit's query indexes lag.",
            discussion:
                "Lookups by record name and change feeds see a write at once, as on CloudKit. A lane's `expect` and "
                + "`query` steps take `within: 10s` to wait for what an index shows (Docs/Lanes.md).",
            valueName: "duration"))
    var indexLag: String?

    @Option(
        name: .customLong("allow-origin"),
        help: ArgumentHelp(
            "Let web pages of this origin call the emulator from a browser (repeatable).",
            discussion:
                "ORIGIN is scheme://host[:port], such as https://app.example.test. Pages on this machine "
                + "(http://localhost:PORT, http://127.0.0.1:PORT, http://[::1]:PORT) are always allowed. An "
                + "allowed page is answered with CORS headers and may sign in through the sign-in popup, as "
                + "CloudKit JS does (Docs/CloudKit.md).",
            valueName: "origin"))
    var allowOrigin: [String] = []

    @Option(
        name: .customLong("allow-host"),
        help: ArgumentHelp(
            "Answer requests that call the emulator by this host name (repeatable).",
            discussion:
                "serve answers to 127.0.0.1, localhost, [::1], the --host name and the address a connection "
                + "reached, on any port; a request naming another host (its Host header) is refused with 421, "
                + "so that a page whose name an attacker points at this machine (DNS rebinding) cannot use it. "
                + "Give the name alone, such as devbox.local (Docs/CloudKit.md).",
            valueName: "name"))
    var allowHost: [String] = []

    @Option(
        help: ArgumentHelp(
            "Make each Web Services answer wait this long, as Apple's service is far away (e.g. 80ms~20ms).",
            discussion:
                "A duration as Terraform writes one (ms, s, m: 80ms, 1.5s), and after ~ a jitter: 80ms~20ms waits "
                + "60 to 100 ms, drawn anew for each request. The wait holds no thread: many requests wait at once.",
            valueName: "duration"))
    var latency: String?

    @Option(
        help: ArgumentHelp(
            "Answer 429 THROTTLED past this many requests a second (or a minute) from one user (e.g. 40/s).",
            discussion:
                "N/s or N/m, counted over a sliding window for each user (the user of the request's web auth "
                + "token; requests without one are counted by the web page they come from, sign-ins apart). A "
                + "refused request carries retryAfter in whole seconds, as CloudKit's, and changes nothing.",
            valueName: "rate"))
    var throttle: String?

    @Option(
        help: ArgumentHelp(
            "Make this share of requests meet a fault (e.g. 'unavailable=5%,reset=2%,lost-answer=2%').",
            discussion:
                "unavailable answers 503 TRY_AGAIN_LATER with retryAfter; reset closes the connection before the "
                + "request is read (nothing changes); lost-answer applies the request, then closes the connection "
                + "before the answer is sent. Shares are 0% to 100% and add up to 100% at most. The request log "
                + "says which fault each request met (fault=lost-answer).",
            valueName: "fault=percent,…"))
    var faults: String?

    @Option(
        name: .customLong("fault-seed"),
        help: ArgumentHelp(
            "Repeat a run: the same seed gives the same waits and faults, in request-arrival order (e.g. 7).",
            discussion: "A whole number. Without it each start draws differently.",
            valueName: "seed"))
    var faultSeed: String?

    /// The network conditions of `--latency`, `--throttle`, `--faults` and `--fault-seed`.
    /// - Throws: `ValidationError` naming the option and what to write.
    func networkConditions() throws -> NetworkConditions {
        do {
            return try NetworkConditions(latency: latency, throttle: throttle, faults: faults, seed: faultSeed)
        } catch {
            throw ValidationError(error.message { $0 == "seed" ? "--fault-seed" : "--\($0)" })
        }
    }

    /// The keyring of `--server-key`.
    func serverKeyring() throws -> ServerKeyring {
        var keyring = ServerKeyring()
        for entry in serverKey {
            let parts = entry.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError(
                    "--server-key \"\(entry)\" is not KEY_ID=PATH: give the key ID, '=', and the PEM file's path")
            }
            let path = String(parts[1])
            let pem: String
            do {
                pem = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ValidationError(
                    "--server-key \(parts[0]): cannot read \(path): check the path and its permissions")
            }
            do {
                try keyring.add(keyID: String(parts[0]), pem: pem)
            } catch let error as ShareError {
                throw ValidationError("--server-key \(parts[0]) (\(path)): \(error.reason)")
            }
        }
        return keyring
    }

    func validate() throws {
        _ = try serverKeyring()
        _ = try networkConditions()
        if let indexLag, DurationText.seconds(indexLag) == nil {
            throw ValidationError("--index-lag \"\(indexLag)\" is not a length of time: write 2s, 500ms or 1m")
        }
        for origin in allowOrigin where EmulatorConfiguration.origin(of: origin) == nil {
            throw ValidationError(
                "--allow-origin \"\(origin)\" is not a web origin: give scheme://host[:port], such as "
                    + "https://app.example.test")
        }
        for name in allowHost {
            if let problem = EmulatorConfiguration.hostNameProblem(name) {
                throw ValidationError(
                    "--allow-host \"\(name)\" is \(problem): write the name alone, such as devbox.local")
            }
        }
        if let port, !(0...65535).contains(port) {
            throw ValidationError("--port \(port) is not a port: give 0…65535")
        }
        if let maxWorlds, maxWorlds < 1 {
            throw ValidationError("--max-worlds \(maxWorlds) holds no world: give 1 or more (default 500)")
        }
        if let apiToken, apiToken.isEmpty {
            throw ValidationError("--api-token is empty: give a token, or leave the option out for a random one")
        }
    }

    @Option(
        name: .customLong("max-worlds"),
        help: ArgumentHelp(
            "Hold at most this many containers and environments (default 500).",
            discussion:
                "A request that would make one more is answered 413 QUOTA_EXCEEDED; DELETE "
                + "/_sharelane/worlds/CONTAINER frees a place (Docs/CloudKit.md).",
            valueName: "count"))
    var maxWorlds: Int?

    /// What the options set, over `EmulatorSettings`' defaults (the ones `SharelaneEmulator` starts with too):
    /// an option not given leaves its default.
    /// - Throws: `ValidationError` naming the option at fault.
    func settings() throws -> EmulatorSettings {
        var settings = EmulatorSettings()
        settings.serverKeys = try serverKeyring()
        settings.network = try networkConditions()
        if strictTokens { settings.strictTokens = true }
        if opaqueChecksums { settings.opaqueChecksums = true }
        if let lag = indexLag.flatMap(DurationText.seconds) { settings.indexLag = .seconds(lag) }
        settings.allowedOrigins = allowOrigin
        settings.allowedHosts = allowHost
        settings.maxWorlds = maxWorlds
        return settings
    }

    @OptionGroup var logging: LoggingOptions

    /// Wrapped around a command, serve's request log would fill the command's output: warnings only, unless
    /// `--log-level` asks for more.
    var chosenDefaultLogLevel: Logger.Level { fixture.command.isEmpty ? Self.defaultLogLevel : .warning }

    func run() async throws {
        let logger = Logger(label: "sharelane.serve")
        // Wrapped around a command, serve hands every signal on to it (and removes its users file), from the
        // start: a cancelled CI job never leaves a command running or ends with status 0.
        if !fixture.command.isEmpty { Interruptions.install(also: [SIGHUP]) }
        // A fixture starts empty, as the Firebase emulators do, unless told where to start: a test suite never
        // meets what an earlier run or an `apply` left in the project's store, nor leaves anything in it.
        let url =
            store == nil && (fixture.recipe != nil || fixture.importFile != nil)
            ? "memory:" : StoreLocator.effectiveURL(option: store)
        let settings = try settings()
        let served: any StoreWorlds
        do {
            switch try StoreLocator.location(of: url) {
            case .sqlite(let path):
                if let refusal = StoreFile.refusal(at: path, url: url) { throw CommandFailure.input(refusal) }
                served = try EmbeddedStore.worlds(path: path, limits: settings.worldLimits, logger: logger)
            case .memory: served = EmbeddedStore.worldsInMemory(limits: settings.worldLimits, logger: logger)
            case .http, .cloudKit(_, _):
                throw CommandFailure.usage(
                    "serve needs a local store to serve (sqlite:PATH or memory:), not \(url)")
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.store("cannot open the store '\(url)': \(error)")
        }
        ProcessMemory.keepFreedMemory()
        let token = apiToken ?? EmulatorConfiguration.makeAPIToken()
        let generated = apiToken == nil
        let keyring = settings.serverKeys
        let network = settings.network
        // Wrapped around a command, serve takes a free port unless told one, so that test runs do not meet.
        let port = self.port ?? (fixture.command.isEmpty ? 8420 : 0)
        let configuration = settings.emulatorConfiguration(host: host, port: port, apiToken: token)
        let lag = configuration.indexLag
        let emulator = CloudKitEmulator(worlds: served, configuration: configuration, logger: logger)
        let host = self.host
        let strictTokens = self.strictTokens
        let opaqueChecksums = self.opaqueChecksums
        let allowedOrigins = allowOrigin.compactMap(EmulatorConfiguration.origin(of:))
        let allowedHosts = allowHost
        let storeName = served.displayName
        let seeded = try await fixture.prepare(emulator, worlds: served, logger: logger)
        if !fixture.command.isEmpty {
            return try await runWrapped(emulator, seeded: seeded, token: token, logger: logger)
        }
        do {
            try await emulator.run { boundPort in
                let address = Self.address(host: host, port: boundPort)
                var lines = ["sharelane serve: CloudKit Web Services on http://\(address) over \(storeName)"]
                if generated {
                    // Docs/CloudKit.md: the emulator prints the API token it made, once, so that clients can use it.
                    lines.append("API token: \(token)")
                    lines.append("  export CLOUDKIT_API_TOKEN=\(token)")
                } else {
                    lines.append("API token: the one given with --api-token")
                }
                if !keyring.keyIDs.isEmpty {
                    lines.append("Server-to-server keys: \(keyring.keyIDs.joined(separator: ", ")) (public database)")
                }
                if strictTokens { lines.append("Web auth tokens: one request each (--strict-tokens)") }
                if opaqueChecksums { lines.append("Asset checksums: opaque, as Apple's (--opaque-checksums)") }
                if !allowedOrigins.isEmpty {
                    lines.append("Browser pages allowed: loopback origins, \(allowedOrigins.joined(separator: ", "))")
                }
                if !allowedHosts.isEmpty {
                    lines.append(
                        "Host names answered: 127.0.0.1, localhost, [::1], \(allowedHosts.joined(separator: ", "))")
                }
                if lag > 0 { lines.append("Query index lag: queries see a write \(lag) s after it (--index-lag)") }
                if network != .none {
                    // Docs/CloudKit.md, "Rehearsing a bad network".
                    lines.append("Network: \(network) (POST /_sharelane/faults changes it)")
                }
                lines.append("  sharelane … --store http://\(address)    (Ctrl-C stops)")
                // Docs/Console.md: the console's address, never with the token in it.
                lines.append("Console: http://\(address)/    (read-only; sign in with the API token)")
                if let seeded {
                    lines.append(
                        "Seeded from \(seeded.recipe) in \(seeded.world) (\(seeded.users.count) users): "
                            + "POST /_sharelane/reset goes back to it (Docs/Testing.md)")
                }
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
        } catch {
            throw Self.cannotListen(host: host, port: port, reason: "\(error)")
        }
        try await fixture.exportIfAsked(emulator)
    }

    /// `serve … -- COMMAND`: serves while the command runs, with the fixture in its environment, then stops
    /// and exits with the command's status.
    ///
    /// SIGINT, SIGTERM and SIGHUP are passed on to the command's process group from the moment serve has
    /// started listening; the users file is removed on every way out that runs code.
    private func runWrapped(
        _ emulator: CloudKitEmulator, seeded: FixtureOptions.Seeded?, token: String, logger: Logger
    ) async throws {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = emulator.application { port in
            continuation.yield(port)
            continuation.finish()
        }
        // Stopped by a graceful shutdown when the command ends: serve's own signal handling is the command's.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [application], logger: logger))
        let server = Task { () -> String? in
            do {
                try await group.run()
                return nil
            } catch {
                // A port that is taken or an address this machine does not have: serve never listens.
                continuation.finish()
                return "\(error)"
            }
        }
        var iterator = ports.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            throw Self.cannotListen(host: host, port: port ?? 0, reason: await server.value ?? "it stopped")
        }
        // The seeded world, or the one a snapshot file brought people to.
        let fromFile = await emulator.seededWorlds()
        let world =
            seeded?.world ?? (fromFile.count == 1 ? fromFile[0] : nil)
            ?? StoreWorld(container: StoreWorld.defaultContainer, environment: .development)
        let users = try await emulator.fixtureUsers(container: world.container, environment: world.environment)
        let baseURL = "http://" + Self.address(host: host, port: boundPort)
        let scratch = try UsersFile.folder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let usersFile = scratch.appendingPathComponent("users.json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        try UsersFile.write(
            encoder.encode(Dictionary(users.map { ($0.handle, $0) }) { first, _ in first }), to: usersFile.path)
        let child = ChildProcess(
            fixture.command,
            environment: FixtureOptions.commandEnvironment(
                baseURL: baseURL, apiToken: token, world: world, users: users, usersFile: usersFile.path),
            ownGroup: true, grace: .milliseconds(Int(try fixture.graceSeconds * 1000)))
        let status = await Interruptions.whileForwarding(to: { child.stop($0) }) {
            Terminal.printError(
                "sharelane serve: \(baseURL) over \(emulator.displayName)"
                    + (seeded.map { ", seeded from \($0.recipe) in \($0.world)" } ?? "") + "; running "
                    + fixture.command.joined(separator: " "))
            return await FixtureOptions.run(child)
        }
        await group.triggerGracefulShutdown()
        _ = await server.value
        try await fixture.exportIfAsked(emulator)
        if status != 0 { throw ExitCode(status) }
    }

    /// Why serve could not listen, in words: a port another program has, or an address this machine lacks.
    static func cannotListen(host: String, port: Int, reason: String) -> CommandFailure {
        let address = Self.address(host: host, port: port)
        if reason.contains("errno: \(EADDRINUSE))") {
            return CommandFailure.conflict(
                "cannot serve on \(address): another program listens on port \(port); give another --port (0 "
                    + "picks a free one)")
        }
        if reason.contains("errno: \(EADDRNOTAVAIL))") {
            return CommandFailure.usage(
                "cannot serve on \(address): \(host) is not an address of this machine; give --host 127.0.0.1, or "
                    + "one this machine has")
        }
        return CommandFailure.input("cannot serve on \(address): \(reason); try another --port or --host")
    }

    /// `HOST:PORT` as a URL writes it: an IPv6 address in brackets, and an address that means "every
    /// address" (0.0.0.0, ::) as this machine's loopback one, which a client can call.
    static func address(host: String, port: Int) -> String {
        switch host {
        case "0.0.0.0": return "127.0.0.1:\(port)"
        case "::", "[::]": return "[::1]:\(port)"
        case let ipv6 where ipv6.contains(":") && !ipv6.hasPrefix("["): return "[\(ipv6)]:\(port)"
        default: return "\(host):\(port)"
        }
    }
}
