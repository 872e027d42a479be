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
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--store", "sqlite:\(storePath)", "--port", "0"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()

        // The first lines name the address and the API token.
        var printed = ""
        let deadline = Date().addingTimeInterval(30)
        while !printed.contains("export CLOUDKIT_API_TOKEN="), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { try await Task.sleep(nanoseconds: 50_000_000) }
            printed += String(decoding: chunk, as: UTF8.self)
        }
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
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("POST /auth/signin 200"))
        #expect(log.contains("/private/zones/list 200"))
        #expect(!log.contains(token), "the log shows the API token")
        #expect(!log.contains("ckWebAuthToken"), "the log shows a web auth token")
    }
}
