import AsyncHTTPClient
import Emulator
import Foundation
import NIOCore
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// `GET` and `POST /_sharelane/faults` on a live emulator: read back in the shape they were set, refused with
/// a clear message for bad input, only with the API token (or a console session), only from this machine;
/// and the console's overview showing what is in force.
@Suite(.serialized) struct NetworkFaultsEndpointTests {
    typealias H = EmulatorHarness

    static let path = "/_sharelane/faults"
    static let withToken = ["ckAPIToken": H.apiToken]

    @Test("settings are set and read back in the same shape; {} and an empty faults text clear them")
    func setAndReadBack() async throws {
        try await H.withEmulator { base in
            var answer = try await H.raw(base, Self.path, query: Self.withToken, method: "GET")
            #expect(answer.status == 200)
            #expect(answer.json.isEmpty, "\(answer.text)")

            let settings =
                #"{"latency": "80ms~20ms", "throttle": "40/s", "faults": "unavailable=3%,lost-answer=1%", "seed": 7}"#
            answer = try await H.raw(base, Self.path, query: Self.withToken, body: settings)
            #expect(answer.status == 200, "\(answer.text)")
            let expected: [String: AnyHashable] = [
                "latency": "80ms~20ms", "throttle": "40/s", "faults": "unavailable=3%,lost-answer=1%", "seed": 7,
            ]
            #expect(Self.hashable(answer.json) == expected)
            answer = try await H.raw(base, Self.path, query: Self.withToken, method: "GET")
            #expect(Self.hashable(answer.json) == expected)

            // Written other ways, read back as serve writes them; a setting left out is off.
            answer = try await H.raw(
                base, Self.path, query: Self.withToken,
                body: #"{"latency": "1.50s", "faults": " reset = 0.5% ,unavailable=2%", "throttle": null}"#)
            #expect(Self.hashable(answer.json) == ["latency": "1.5s", "faults": "unavailable=2%,reset=0.5%"])

            answer = try await H.raw(base, Self.path, query: Self.withToken, body: #"{"faults": ""}"#)
            #expect(answer.json.isEmpty, "\(answer.text)")
            _ = try await H.raw(base, Self.path, query: Self.withToken, body: #"{"throttle": "5/m"}"#)
            answer = try await H.raw(base, Self.path, query: Self.withToken, body: "{}")
            #expect(answer.json.isEmpty, "\(answer.text)")
            answer = try await H.raw(base, Self.path, query: Self.withToken, method: "GET")
            #expect(answer.json.isEmpty, "\(answer.text)")
        }
    }

    @Test(
        "bad input answers 400 BAD_REQUEST saying what and what to write, and changes nothing",
        arguments: [
            (#"{"latency": "fast"}"#, #"latency "fast" is not a duration: write 80ms, 1.5s, or 80ms~20ms for jitter"#),
            (#"{"latency": 80}"#, #"latency must be text, such as {"latency": "80ms~20ms"}"#),
            (#"{"throttle": "40"}"#, #"throttle "40" is not a rate: "#),
            (#"{"faults": "unavailable=60%,reset=50%"}"#, "adds up to 110%"),
            (#"{"faults": "timeout=5%"}"#, #"there is no fault "timeout": write unavailable, reset or lost-answer"#),
            (#"{"faults": "reset=5"}"#, #""5" is not a percentage: write 0% to 100%"#),
            (#"{"seed": -1}"#, #"seed "-1" is not a seed: write a whole number"#),
            (
                #"{"latncy": "80ms"}"#,
                #""latncy" is not a setting: the settings are latency, throttle, faults and seed"#
            ),
            ("latency=80ms", "the body is not a JSON object: send any of"),
        ])
    func badInputIsRefused(body: String, message: String) async throws {
        try await H.withEmulator { base in
            _ = try await H.raw(base, Self.path, query: Self.withToken, body: #"{"faults": "reset=1%"}"#)
            let answer = try await H.raw(base, Self.path, query: Self.withToken, body: body)
            #expect(answer.status == 400)
            #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
            #expect((answer.json["reason"] as? String)?.contains(message) == true, "\(answer.text)")
            let kept = try await H.raw(base, Self.path, query: Self.withToken, method: "GET")
            #expect(Self.hashable(kept.json) == ["faults": "reset=1%"])
        }
    }

    @Test("without the API token the endpoint answers 401 and changes nothing; a console session will do")
    func theAPITokenOrASessionIsRequired() async throws {
        try await H.withEmulator { base in
            var answer = try await H.raw(base, Self.path, body: #"{"faults": "reset=100%"}"#)
            #expect(answer.status == 401)
            #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
            #expect((answer.json["reason"] as? String)?.contains("ckAPIToken") == true, "\(answer.text)")
            answer = try await H.raw(base, Self.path, query: ["ckAPIToken": "wrong"], method: "GET")
            #expect(answer.status == 401)
            answer = try await H.raw(base, Self.path, query: Self.withToken, method: "GET")
            #expect(answer.json.isEmpty, "the refused POST changed the settings: \(answer.text)")

            // The console's session cookie stands for the API token, as on the console's pages.
            let signIn = try await H.raw(
                base, "/console/signin", body: "token=\(H.percentEncoded(H.apiToken))&next=%2F",
                contentType: "application/x-www-form-urlencoded")
            let cookie = try #require(signIn.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
            answer = try await H.raw(
                base, Self.path, body: #"{"latency": "10ms"}"#, headers: [("Cookie", cookie)])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(Self.hashable(answer.json) == ["latency": "10ms"])
        }
    }

    @Test(
        "only loopback addresses count as this machine",
        arguments: [
            ("127.0.0.1", true), ("127.8.9.10", true), ("::1", true), ("[::1]", true), ("::ffff:127.0.0.1", true),
            ("10.0.0.1", false), ("192.168.1.20", false), ("::ffff:10.0.0.1", false), ("fe80::1", false),
            ("128.0.0.1", false), ("127.0.0", false), ("127.0.0.256", false), ("localhost", false), ("", false),
        ])
    func loopbackAddresses(address: String, isLoopback: Bool) {
        #expect(EmulatorConfiguration.isLoopback(ipAddress: address) == isLoopback)
    }

    /// An IPv4 address of this machine that is not loopback, if it has one.
    static var nonLoopbackAddress: String? {
        let devices = (try? System.enumerateDevices()) ?? []
        return devices.compactMap { $0.address?.ipAddress }.first { address in
            address.split(separator: ".").count == 4 && !EmulatorConfiguration.isLoopback(ipAddress: address)
        }
    }

    @Test(
        "a caller from another address is refused with 403, even with the API token",
        .enabled(if: nonLoopbackAddress != nil, "this machine has no IPv4 address besides loopback"))
    func anotherAddressIsRefused() async throws {
        let address = try #require(Self.nonLoopbackAddress)
        try await TemporaryDirectory.with("faults-endpoint") { scratch in
            let store = try SQLiteStore(path: scratch.file("serve.sqlite"), logger: H.quiet)
            // Listening on the machine's own address, a connection to it comes from that address, not loopback.
            try await InProcessEmulator.with(
                store: store, configuration: EmulatorConfiguration(apiToken: H.apiToken), logger: H.quiet,
                host: address
            ) { base in
                let answer = try await H.raw(base, Self.path, query: Self.withToken, body: #"{"faults": "reset=100%"}"#)
                #expect(answer.status == 403, "\(answer.text)")
                #expect(answer.json["serverErrorCode"] as? String == "ACCESS_DENIED")
                #expect((answer.json["reason"] as? String)?.contains("this machine only") == true)
                // The faults were not set: Web Services requests from the same caller still answer.
                let read = try await H.raw(
                    base, H.databasePath("public", "zones/list"), query: Self.withToken, method: "GET")
                #expect(read.status == 200, "\(read.text)")
            }
        }
    }

    @Test("the console's overview shows the network in force")
    func theOverviewShowsTheNetwork() async throws {
        try await ConsoleHarness.with { console, _ in
            let cookie = try await console.signIn()
            var page = try await console.get("/", cookie: cookie)
            #expect(page.main.contains("<h2>Network</h2>"))
            #expect(page.main.contains("A good network"))
            var request = HTTPClientRequest(url: console.base + Self.path)
            request.method = .POST
            request.headers.add(name: "Cookie", value: cookie)
            request.body = .bytes(
                ByteBuffer(string: #"{"latency": "80ms~20ms", "throttle": "40/s", "faults": "reset=2%", "seed": 7}"#))
            let response = try await console.client.execute(
                request, timeout: .seconds(TestDeadlines.httpRead.components.seconds))
            #expect(response.status.code == 200)
            page = try await console.get("/", cookie: cookie)
            for text in [
                "<code>80ms~20ms</code>", "60 to 100 ms", "<code>40/s</code>", "past 40 requests a second",
                "<td>reset</td><td><code>2%</code></td>", "<code>7</code>",
            ] {
                #expect(page.main.contains(text), "no \(text) in \(page.main)")
            }
            #expect(!page.main.contains("A good network"))
        }
    }

    /// A JSON object's values as comparable values.
    static func hashable(_ json: [String: Any]) -> [String: AnyHashable] {
        json.compactMapValues { value in
            if let number = value as? NSNumber { return AnyHashable(number.intValue) }
            return value as? AnyHashable
        }
    }
}
