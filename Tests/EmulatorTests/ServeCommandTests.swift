import CloudKitWire
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// The built `sharelane serve`: prints its address and API token, serves, logs each request without
/// tokens, and exits 0 on SIGTERM and SIGINT.
@Suite(.serialized) struct ServeCommandTests {
    /// The `sharelane` binary built beside the test bundle.
    static var binary: URL? {
        FileManager.default.isExecutableFile(atPath: BuiltProducts.sharelane.path) ? BuiltProducts.sharelane : nil
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func serveStartsServesAndStopsCleanly(_ signal: Int32) async throws {
        let binary = try #require(Self.binary, "the sharelane binary is not built beside the tests")
        let scratch = try TemporaryDirectory("serve")
        let storePath = scratch.file("serve.sqlite")
        let errors = scratch.url.appendingPathComponent("serve.err")
        let process = try StartedProcess(
            binary, ["serve", "--store", "sqlite:\(storePath)", "--port", "0"],
            log: scratch.url.appendingPathComponent("serve.out"), errors: errors)
        defer { process.killBlocking() }

        // The first lines name the address and the API token.
        _ = await process.waitUntil(within: TestDeadlines.serverStart) {
            process.output.contains("export CLOUDKIT_API_TOKEN=")
        }
        let printed = process.output
        let base = try #require(printed.firstMatch(of: /http:\/\/127\.0\.0\.1:[0-9]+/).map { String($0.0) })
        let token = try #require(printed.firstMatch(of: /API token: ([0-9a-f]+)/).map { String($0.1) })

        let store = WebServicesStore(
            endpoint: .emulator(
                url: base, apiToken: token, container: EmulatorHarness.container,
                environment: EmulatorHarness.environment),
            logger: EmulatorHarness.quiet)
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let zones = try await store.listZones(in: .private, as: alice.recordName)
        #expect(zones.map(\.zoneID.zoneName) == [defaultZoneName])

        kill(process.processIdentifier, signal)
        let status = try await process.statusAfterSignal("serve was still running")
        #expect(process.process.terminationReason == .exit)
        #expect(status == 0)
        let log = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        #expect(log.contains("POST /auth/signin 200"))
        #expect(log.contains("/private/zones/list 200"))
        #expect(!log.contains(token), "the log shows the API token")
        #expect(!log.contains("ckWebAuthToken"), "the log shows a web auth token")
    }

    // MARK: - A bad network

    @Test("--latency, --throttle, --faults and --fault-seed are printed on start and read back from the endpoint")
    func networkOptionsAreInForce() async throws {
        let server = try await ServeProcess(
            apiToken: "network-options-token",
            extraArguments: [
                "--latency", "80ms~20ms", "--throttle", "40/s", "--faults", "unavailable=5%,reset=2%,lost-answer=2%",
                "--fault-seed", "7",
            ])
        defer { server.stop() }
        #expect(
            server.log.contains(
                "Network: latency 80ms~20ms, throttle 40/s a user, faults unavailable=5%,reset=2%,lost-answer=2%, "
                    + "seed 7"), "\(server.log)")
        let answer = try await EmulatorHarness.raw(
            server.url, "/_sharelane/faults", query: ["ckAPIToken": server.apiToken], method: "GET")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["latency"] as? String == "80ms~20ms")
        #expect(answer.json["throttle"] as? String == "40/s")
        #expect(answer.json["faults"] as? String == "unavailable=5%,reset=2%,lost-answer=2%")
        #expect((answer.json["seed"] as? NSNumber)?.intValue == 7)
        #expect(!server.log.contains(server.apiToken), "the log shows the API token")
    }

    @Test(
        "bad network options are refused before serving, saying what to write",
        arguments: [
            (["--latency", "fast"], #"--latency "fast" is not a duration: write 80ms, 1.5s, or 80ms~20ms for jitter"#),
            (["--latency", "80ms~x"], #"--latency "80ms~x" is not a duration"#),
            (["--throttle", "forty"], #"--throttle "forty" is not a rate: write the requests each user may send"#),
            (["--faults", "reset=2"], #"--faults "reset=2": "2" is not a percentage: write 0% to 100%"#),
            (["--faults", "drop=2%"], #"--faults "drop=2%": there is no fault "drop": write unavailable, reset or"#),
            (["--faults", "unavailable=70%,reset=40%"], #"adds up to 110%"#),
            (["--fault-seed", "seven"], #"--fault-seed "seven" is not a seed: write a whole number"#),
        ])
    func badNetworkOptionsAreRefused(arguments: [String], message: String) async throws {
        let result = try await SharelaneBinary.runProcess(
            BuiltProducts.sharelane, ["serve", "--store", "memory:", "--port", "0"] + arguments)
        // sharelane exits 1 for any error it names (a usage error included).
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.hasPrefix("Error: " + arguments[0]), "\(result.output)")
        #expect(result.stderr.contains(message), "\(result.output)")
        #expect(!result.output.contains("CloudKit Web Services on"), "serve started: \(result.output)")
    }

    @Test("--allow-host names are answered, printed on start, and a name that is not one is refused")
    func allowHost() async throws {
        let server = try await ServeProcess(extraArguments: [
            "--allow-host", "devbox.test", "--allow-host", "[fd00::7]",
        ])
        defer { server.stop() }
        #expect(server.log.contains("Host names answered: 127.0.0.1, localhost, [::1], devbox.test, [fd00::7]"))
        let port = try #require(URLComponents(string: server.url)?.port)
        for (host, status) in [("devbox.test:\(port)", 200), ("[fd00::7]:\(port)", 200), ("other.test:\(port)", 421)] {
            let page = try await EmulatorHarness.raw(
                server.url, "/console/signin", method: "GET", headers: [("Host", host)])
            #expect(page.status == status, "\(host): \(page.text)")
        }
        for (name, message) in [
            ("http://devbox.test:8420", "is a URL or an address with a port, not a host name"),
            ("devbox test", "is not a host name (letters, digits, '-' and '.')"), ("", "is empty"),
        ] {
            let result = try await SharelaneBinary.runProcess(
                BuiltProducts.sharelane, ["serve", "--store", "memory:", "--port", "0", "--allow-host", name])
            #expect(result.status == 1, "\(result.output)")
            #expect(result.stderr.contains("--allow-host \"\(name)\" \(message)"), "\(result.output)")
        }
    }

    @Test("serve --help explains each network option with an example")
    func helpExplainsTheNetworkOptions() async throws {
        let result = try await SharelaneBinary.run(["serve", "--help"])
        #expect(result.status == 0)
        for text in [
            "--latency <duration>", "80ms~20ms", "--throttle <rate>", "40/s", "--faults <fault=percent,…>",
            "unavailable=5%,reset=2%,lost-answer=2%", "--fault-seed <seed>", "(e.g. 7)", "/_sharelane/faults",
        ] {
            #expect(result.stdout.contains(text), "no \(text) in:\n\(result.stdout)")
        }
    }
}
