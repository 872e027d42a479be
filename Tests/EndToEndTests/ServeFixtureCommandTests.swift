import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane serve` as a test fixture, as a test suite's script runs it: seeded from a recipe, wrapped
/// around a command whose status it exits with, stopped with it, and carried over in a snapshot file.
@Suite final class ServeFixtureCommandTests {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path

    init() throws {
        scratch = try TemporaryDirectory("e2e-fixture")
    }

    /// A shell script in the scratch folder.
    func script(_ name: String, _ body: String) throws -> String {
        let path = try scratch.write(name, "#!/bin/sh\n" + body)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    @Test func theCommandRunsAgainstTheSeededStoreAndServeExitsWithItsStatus() async throws {
        // What a test suite reads: the fixture's address and tokens, and bob's shared zone over the wire.
        let check = try script(
            "check.sh",
            """
            echo "container=$CLOUDKIT_CONTAINER environment=$CLOUDKIT_ENVIRONMENT store=$SHARELANE_STORE"
            test "$SHARELANE_STORE" = "$SHARELANE_URL" || exit 10
            python3 - <<'PY'
            import json, os, urllib.parse, urllib.request
            users = json.load(open(os.environ["SHARELANE_USERS"]))
            print("users", sorted(users), users["bob"]["emailAddress"])
            assert users["bob"]["webAuthToken"] == os.environ["SHARELANE_WEB_AUTH_TOKEN_BOB"]
            query = urllib.parse.urlencode({"ckAPIToken": os.environ["CLOUDKIT_API_TOKEN"],
                                            "ckWebAuthToken": os.environ["SHARELANE_WEB_AUTH_TOKEN_BOB"]})
            url = "%s/database/1/%s/%s/shared/zones/list?%s" % (os.environ["SHARELANE_URL"],
                os.environ["CLOUDKIT_CONTAINER"], os.environ["CLOUDKIT_ENVIRONMENT"], query)
            zones = json.load(urllib.request.urlopen(urllib.request.Request(url, data=b"{}")))["zones"]
            print("bob shares", [z["zoneID"]["zoneName"] for z in zones])
            PY
            exit 3
            """)
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--recipe", recipe, "--lane", "demo", "--", check], in: directory)
        #expect(result.status == 3, "\(result.output)")
        #expect(
            result.stdout.contains("container=iCloud.com.example.Lists environment=development"), "\(result.output)")
        #expect(result.stdout.contains("users ['alice', 'bob', 'carol', 'dana'] bob@example.com"), "\(result.output)")
        #expect(result.stdout.contains("bob shares ['FamilyLists']"), "\(result.output)")
        // The demo lane ran before the command, on stderr; serve's request log stays quiet around the command.
        #expect(result.stderr.contains("lane demo succeeded"), "\(result.stderr)")
        #expect(!result.stderr.contains("POST /database/"), "\(result.stderr)")
        let passing = try await SharelaneBinary.run([
            "serve", "--store", "memory:", "--recipe", recipe, "--", "true",
        ])
        #expect(passing.status == 0, "\(passing.output)")
    }

    @Test func aRecipeThatDoesNotValidateStopsServeBeforeTheCommandRuns() async throws {
        let bad = try scratch.write(
            "bad.yaml",
            """
            sharelane: 1
            name: broken
            users: { alice: { email: alice@example.com } }
            zones: { A: { recordz: {} } }
            """)
        let marker = scratch.file("ran")
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--recipe", bad, "--", "touch", marker], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.yaml:4:15: error: unknown key `recordz` in zone `A`"), "\(result.stderr)")
        #expect(result.stderr.contains("serve: not started"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func sigtermReachesTheCommandAndNothingIsLeftRunning() async throws {
        let pidFile = scratch.file("child.pid")
        let termFile = scratch.file("terminated")
        let waiting = try script(
            "wait.sh",
            """
            echo $$ > \(pidFile)
            trap 'echo yes > \(termFile); exit 7' TERM
            while :; do sleep 0.1; done
            """)
        let process = try StartedProcess(
            ["serve", "--store", "memory:", "--", waiting], in: directory,
            log: URL(fileURLWithPath: pidFile + ".out"))
        defer { process.killBlocking() }
        _ = await process.waitUntil { FileManager.default.fileExists(atPath: pidFile) }
        let text = try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let child = Int32(text) else { throw FixtureError(message: "the command wrote no pid: \(text)") }
        process.process.terminate()  // SIGTERM to serve
        let status = try await process.statusAfterSignal("serve was still running")
        #expect(status == 7, "serve exits with the command's status")
        #expect(FileManager.default.fileExists(atPath: termFile), "the command got the SIGTERM")
        #expect(kill(child, 0) == -1, "the command is not running")
    }

    @Test func aSnapshotFileWrittenOnExitStartsTheNextServe() async throws {
        let snapshot = scratch.file("seeded.json")
        let first = try await SharelaneBinary.run(
            [
                "serve", "--store", "memory:", "--recipe", recipe, "--lane", "demo", "--export-on-exit", snapshot, "--",
                "true",
            ],
            in: directory)
        #expect(first.status == 0, "\(first.output)")
        // It holds every world's data: this user's only, from the moment it exists.
        let mode = try FileManager.default.attributesOfItem(atPath: snapshot)[.posixPermissions] as? Int
        #expect(mode == 0o600, "\(String(mode ?? 0, radix: 8))")
        let file =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: snapshot))) as? [String: Any]
        #expect(file?["format"] as? String == "sharelane-snapshot")
        #expect(file?["version"] as? Int == 1)
        // No recipe this time: the imported state is what the command meets (eggs is the demo lane's).
        let check = try script(
            "eggs.sh",
            """
            python3 - <<'PY'
            import json, os, urllib.parse, urllib.request
            users = json.load(open(os.environ["SHARELANE_USERS"]))
            query = urllib.parse.urlencode({"ckAPIToken": os.environ["CLOUDKIT_API_TOKEN"],
                                            "ckWebAuthToken": users["alice"]["webAuthToken"]})
            url = "%s/database/1/iCloud.com.example.Lists/development/private/records/lookup?%s" % (
                os.environ["SHARELANE_URL"], query)
            body = json.dumps({"zoneID": {"zoneName": "FamilyLists"}, "records": [{"recordName": "eggs"}]}).encode()
            records = json.load(urllib.request.urlopen(urllib.request.Request(url, data=body)))["records"]
            print("eggs:", records[0]["fields"]["title"]["value"])
            PY
            """)
        let second = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--import", snapshot, "--", check], in: directory)
        #expect(second.status == 0, "\(second.output)")
        #expect(second.stdout.contains("eggs: Eggs"), "\(second.output)")
        let broken = try scratch.write("broken.json", #"{"format":"something-else","version":1,"worlds":[]}"#)
        let refused = try await SharelaneBinary.run([
            "serve", "--store", "memory:", "--import", broken, "--", "true",
        ])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("not a sharelane snapshot file"), "\(refused.stderr)")
    }
}
