import Emulator
import Foundation
import GRDB
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// What serve's worlds and fixture calls refuse over HTTP, and what they leave behind when they do: bad
/// container names make no folder, named snapshots stay within their limits, and a snapshot that is not
/// sharelane's own store is never restored.
@Suite struct WorldBoundsOverHTTPTests {
    typealias H = EmulatorHarness

    /// The emulator over a fresh store file, with `limits` on named snapshots; `body` gets its URL and the
    /// store file's path.
    static func withServe(
        limits: SnapshotLimits = .standard, _ body: @Sendable (String, String) async throws -> Void
    ) async throws {
        try await TemporaryDirectory.with("bounds") { scratch in
            let path = scratch.file("serve.sqlite")
            let store = try SQLiteStore(path: path, logger: H.quiet)
            var configuration = EmulatorConfiguration(apiToken: H.apiToken)
            configuration.snapshotLimits = limits
            try await InProcessEmulator.with(store: store, configuration: configuration) { url in
                try await body(url, path)
            }
        }
    }

    static func fixture(_ url: String, _ path: String, method: String = "POST", query: [String: String] = [:])
        async throws -> H.Answer
    {
        try await H.raw(
            url, path, query: query.merging(["ckAPIToken": H.apiToken]) { $1 }, body: method == "GET" ? nil : "{}",
            method: method)
    }

    @Test func badContainerNamesAreRefusedBeforeAnythingIsMade() async throws {
        try await Self.withServe { url, path in
            let alice = try await H.signIn(url, "alice@example.com")
            for bad in [".git", "-rf", "....", "iCloud.", "iCloud..x"] {
                let answer = try await ContainerWorldsTests.createZone(url, token: alice.token, bad, "development")
                #expect(answer.status == 400, "\(bad): \(answer.text)")
                #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
            }
            // A good name, but a request that did not pass authentication: no world either.
            let refused = try await ContainerWorldsTests.createZone(
                url, token: alice.token, "iCloud.com.example.Unknown", "development", apiToken: "wrong")
            #expect(refused.status >= 400 && refused.status < 500, "\(refused.text)")
            let folder = SQLiteWorlds.worldsFolder(of: path)
            let made = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            #expect(made.isEmpty, "\(made)")
        }
    }

    @Test("tokens/create refuses a bad container name on either path, as every operation does, making no world")
    func tokensCheckTheirContainer() async throws {
        try await Self.withServe { url, path in
            let alice = try await H.signIn(url, "alice@example.com")
            for bad in [".git", "-rf", "iCloud..x"] {
                for route in [
                    "/device/1/\(bad)/development/tokens/create",
                    "/database/1/\(bad)/development/private/tokens/create",
                ] {
                    let answer = try await H.raw(
                        url, route, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": alice.token],
                        body: #"{"apnsEnvironment":"development"}"#)
                    #expect(answer.status == 400, "\(route): \(answer.text)")
                    #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST", "\(route)")
                }
            }
            let made = (try? FileManager.default.contentsOfDirectory(atPath: SQLiteWorlds.worldsFolder(of: path))) ?? []
            #expect(made.isEmpty, "\(made)")
        }
    }

    @Test func fixtureCallsCheckTheirContainerAndSnapshotNames() async throws {
        try await Self.withServe { url, _ in
            let users = try await Self.fixture(
                url, "/_sharelane/users", method: "GET", query: ["container": "../../x"])
            #expect(users.status == 400, "\(users.text)")
            #expect(users.json["serverErrorCode"] as? String == "BAD_REQUEST")
            let reset = try await Self.fixture(url, "/_sharelane/reset", query: ["container": "../../x"])
            #expect(reset.status == 400, "\(reset.text)")
            for name in [".", "..", "%2E", "%2E%2E", "..."] {
                let answer = try await Self.fixture(url, "/_sharelane/snapshots/\(name)")
                #expect(answer.status == 400, "\(name): \(answer.text)")
            }
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/v1.0").status == 200)
        }
    }

    @Test func namedSnapshotsStayWithinTheirLimits() async throws {
        try await Self.withServe(limits: SnapshotLimits(count: 2, bytes: 64 << 20)) { url, _ in
            let alice = try await H.signIn(url, "alice@example.com")
            #expect(
                try await ContainerWorldsTests.createZone(url, token: alice.token, H.container, "development").status
                    == 200)
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/one").status == 200)
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/two").status == 200)
            let third = try await Self.fixture(url, "/_sharelane/snapshots/three")
            #expect(third.status == 413, "\(third.text)")
            #expect(third.json["serverErrorCode"] as? String == "QUOTA_EXCEEDED")
            #expect((third.json["reason"] as? String ?? "").contains("at most 2 named snapshots"), "\(third.text)")
            // Taken again under its name, a snapshot is replaced; deleted, it makes room.
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/two").status == 200)
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/two", method: "DELETE").status == 200)
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/two/restore").status == 404)
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/three").status == 200)
        }
        try await Self.withServe(limits: SnapshotLimits(count: 50, bytes: 1024)) { url, _ in
            _ = try await H.signIn(url, "alice@example.com")
            let big = try await Self.fixture(url, "/_sharelane/snapshots/big")
            #expect(big.status == 413, "\(big.text)")
            #expect((big.json["reason"] as? String ?? "").contains("over the limit of 1 KB"), "\(big.text)")
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/big/restore").status == 404)
        }
    }

    @Test func aSnapshotOfAWorldWithATriggerIsNotRestored() async throws {
        try await Self.withServe { url, path in
            let alice = try await H.signIn(url, "alice@example.com")
            #expect(
                try await ContainerWorldsTests.createZone(url, token: alice.token, H.container, "development").status
                    == 200)
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/clean").status == 200)
            // Someone adds a trigger to the served file by hand.
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "CREATE TRIGGER audit AFTER UPDATE ON counter BEGIN DELETE FROM user; END")
            }
            try queue.close()
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/tampered").status == 200)
            let refused = try await Self.fixture(url, "/_sharelane/snapshots/tampered/restore")
            #expect(refused.status == 400, "\(refused.text)")
            let reason = refused.json["reason"] as? String ?? ""
            #expect(reason.contains("\(H.container)/development"), "\(reason)")
            #expect(reason.contains("trigger \"audit\""), "\(reason)")
            // The snapshot taken before puts the world back without it.
            #expect(try await Self.fixture(url, "/_sharelane/snapshots/clean/restore").status == 200)
            let triggers = try await DatabaseQueue(path: path).read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'")
            }
            #expect(triggers == 0)
        }
    }
}
