import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane conformance` against a real `serve`, as itself and standing in for Apple's service
/// (`cloudkit:`), recording as it goes: every check passes, no credential reaches the recording or the
/// output, and `sharelane replay` of the recording is the same throughout; against `cloudkit:` without a
/// sign-in, and against a store file, it refuses and says what to do.
@Suite("The conformance run against any store")
struct ConformanceCommandTests {
    static let apiToken = "conformance-secret-api-token-3a9d"

    @Test func aConformanceRunAgainstServeRecordsWhatReplaysTheSame() async throws {
        let serve = try await ServeProcess.start(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("conformance")
        let folder = scratch.file("recording")
        let run = try await SharelaneBinary.run(
            ["conformance", "--store", serve.url, "--record", folder],
            environment: ["CLOUDKIT_API_TOKEN": Self.apiToken, "SHARELANE_TOKEN_FILE": scratch.file("tokens.json")])
        #expect(run.status == 0, "\(run.output)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("passed   POST private/records/modify"), "\(run.stdout)")
        #expect(lines.contains("passed   POST private/records/modify, malformed"), "\(run.stdout)")
        #expect(lines.contains("passed   GET public/users/caller, signed out"), "\(run.stdout)")
        #expect(!lines.contains { $0.hasPrefix("failed") || $0.hasPrefix("skipped") }, "\(run.stdout)")
        let summary = try #require(lines.first { $0.hasSuffix(" passed, 0 failed") }, "\(run.stdout)")
        #expect(summary.hasPrefix("55 checks, 55 passed"), "\(summary)")
        let recorded = try #require(lines.last, "\(run.stdout)")
        #expect(recorded.contains("recorded in \(folder): replay them"), "\(recorded)")

        // Every credential masked: the API token, and every web auth token serve handed out.
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(files.first == "0001-auth-signin.json", "\(files)")
        #expect(recorded.hasPrefix("\(files.count) exchanges recorded"), "\(recorded)")
        var tokens = 0
        for file in files {
            let text = try String(contentsOfFile: "\(folder)/\(file)", encoding: .utf8)
            #expect(!text.contains(Self.apiToken), "\(file) holds the API token")
            for value in Self.tokenValues(in: text) {
                tokens += 1
                #expect(value.hasPrefix("<web-auth-token:person-"), "\(file) holds a web auth token")
            }
        }
        #expect(tokens > files.count, "the requests' and the sign-ins' tokens are all seen")
        #expect(!run.output.contains(Self.apiToken))

        // The recording replays the same against a fresh emulator, and against a fresh serve.
        let replayed = try await SharelaneBinary.run(["replay", folder])
        #expect(replayed.status == 0, "\(replayed.output)")
        #expect(
            replayed.stdout.hasSuffix("\(files.count) exchanges, \(files.count) the same, 0 differ\n"),
            "\(replayed.output)")
        let fresh = try await ServeProcess.start(apiToken: "another-conformance-secret-6e2b")
        defer { fresh.stop() }
        let served = try await SharelaneBinary.run(
            ["replay", folder, "--store", fresh.url], environment: ["CLOUDKIT_API_TOKEN": fresh.apiToken])
        #expect(served.status == 0, "\(served.output)")

        // --format json, without a recording: the same checks, as one document.
        let json = try await SharelaneBinary.run(
            ["conformance", "--store", serve.url, "--format", "json"],
            environment: ["CLOUDKIT_API_TOKEN": Self.apiToken, "SHARELANE_TOKEN_FILE": scratch.file("tokens.json")])
        #expect(json.status == 0, "\(json.output)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(document["failed"] as? Int == 0 && document["passed"] as? Int == 55, "\(json.stdout)")
        #expect((document["checks"] as? [[String: Any]])?.count == 55)
        #expect(document["recording"] == nil)
    }

    /// `cloudkit:` as a user with a container runs it, with the user's API token and web auth token: here a
    /// serve stands in for Apple's service (`CLOUDKIT_BASE_URL`). The one user plays both parts, serve's own
    /// endpoints are skipped, no credential is written, and the recording replays the same.
    @Test func cloudKitWithASignedInUserChecksAndRecords() async throws {
        let serve = try await ServeProcess.start(apiToken: Self.apiToken)
        defer { serve.stop() }
        let container = "iCloud.com.example.App"
        let caller = WireCaller(base: serve.url, apiToken: Self.apiToken, container: container)
        let token = try caller.signIn("owner@example.com")
        let scratch = try TemporaryDirectory("conformance")
        let folder = scratch.file("apple")
        let run = try await SharelaneBinary.run(
            ["conformance", "--store", "cloudkit:\(container)", "--record", folder],
            environment: [
                "CLOUDKIT_BASE_URL": serve.url, "CLOUDKIT_API_TOKEN": Self.apiToken, "CLOUDKIT_WEB_AUTH_TOKEN": token,
                "SHARELANE_TOKEN_FILE": scratch.file("tokens.json"), "CLOUDKIT_KEY_ID": "",
                "CLOUDKIT_PRIVATE_KEY_FILE": "",
            ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.stdout.contains("\n57 checks, 47 passed, 0 failed, 10 skipped\n"), "\(run.stdout)")
        #expect(
            run.stdout.contains(
                "skipped  GET public/users/settings: serve's own endpoint, which Apple's service does not have"))
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(files.first == "0001-users-current.json", "no sign-in: the user's token is the one given")
        let all = try files.map { try String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8) }.joined()
        for secret in [Self.apiToken, token] {
            #expect(!all.contains(secret) && !run.output.contains(secret), "a credential was written")
        }
        #expect(all.contains("Recorded by sharelane conformance"), "each file says how it was made")
        #expect(all.contains("against Apple's service (cloudkit:\(container)/development)"))
        let replayed = try await SharelaneBinary.run(["replay", folder])
        #expect(replayed.status == 0, "\(replayed.output)")
        #expect(replayed.stdout.hasSuffix(" 0 differ\n"), "\(replayed.output)")
    }

    /// `cloudkit:` without a sign-in (nobody here reaches Apple's service): what is missing, and what to do.
    @Test func cloudKitWithoutASignInRefusesClearly() async throws {
        let scratch = try TemporaryDirectory("conformance")
        let signedOut = [
            "SHARELANE_TOKEN_FILE": scratch.file("tokens.json"), "CLOUDKIT_API_TOKEN": "",
            "CLOUDKIT_WEB_AUTH_TOKEN": "", "CLOUDKIT_KEY_ID": "", "CLOUDKIT_PRIVATE_KEY_FILE": "",
        ]
        let nothing = try await SharelaneBinary.run(
            ["conformance", "--store", "cloudkit:iCloud.com.example.App", "--record", scratch.file("apple")],
            environment: signedOut)
        #expect(nothing.status == 1, "\(nothing.output)")
        #expect(nothing.stderr.contains("sharelane login --store cloudkit:"), "\(nothing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("apple")), "nothing is recorded")

        var apiTokenOnly = signedOut
        apiTokenOnly["CLOUDKIT_API_TOKEN"] = "apple-secret-api-token-0c4f"
        let noUser = try await SharelaneBinary.run(
            ["conformance", "--store", "cloudkit:iCloud.com.example.App"], environment: apiTokenOnly)
        #expect(noUser.status == 1, "\(noUser.output)")
        #expect(
            noUser.stderr.contains(
                "conformance against cloudkit:iCloud.com.example.App/development needs the API token and a signed-in "
                    + "user"),
            "\(noUser.stderr)")
        #expect(noUser.stderr.contains("sharelane login --store cloudkit:iCloud.com.example.App"))
        #expect(!noUser.output.contains("apple-secret-api-token-0c4f"))

        let noContainer = try await SharelaneBinary.run(
            ["conformance", "--store", "cloudkit:"], environment: apiTokenOnly)
        #expect(noContainer.status == 1)
        #expect(noContainer.stderr.contains("names no CloudKit container"), "\(noContainer.stderr)")

        let file = try await SharelaneBinary.run(["conformance", "--store", scratch.file("store.sqlite")])
        #expect(file.status == 1)
        #expect(file.stderr.contains("conformance checks a service over the wire"), "\(file.stderr)")

        let nobody = try await SharelaneBinary.run(
            ["conformance", "--store", "http://127.0.0.1:9"], environment: ["CLOUDKIT_API_TOKEN": "x-secret-token"])
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("cannot reach http://127.0.0.1:9"), "\(nobody.stderr)")
    }

    /// Every value a case file gives a web auth token: query parameters, JSON keys, the header.
    static func tokenValues(in text: String) -> [String] {
        guard let data = text.data(using: .utf8), let file = try? JSONSerialization.jsonObject(with: data) else {
            return []
        }
        var found: [String] = []
        func walk(_ value: Any, key: String?) {
            if let object = value as? [String: Any] {
                for (name, inner) in object { walk(inner, key: name) }
            } else if let list = value as? [Any] {
                if list.count == 2, let name = list[0] as? String, let value = list[1] as? String,
                    name == "ckWebAuthToken"
                {
                    found.append(value)
                }
                for inner in list { walk(inner, key: key) }
            } else if let text = value as? String,
                ["ckWebAuthToken", "webAuthToken", "x-apple-cloudkit-web-auth-token"].contains(key)
            {
                found.append(text)
            }
        }
        walk(file, key: nil)
        return found
    }
}
