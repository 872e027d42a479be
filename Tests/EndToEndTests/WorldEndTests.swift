import Foundation
import SharelaneTestSupport
import Testing

/// A long-lived `sharelane serve` that sees many containers, through the built binary under a small
/// `--max-worlds`: a world removed with `DELETE /_sharelane/worlds/…`, or a world in memory reset to empty,
/// gives back its place, so the fixture never answers `413 QUOTA_EXCEEDED` for good.
@Suite final class WorldEndTests {
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("e2e-world-end")
    }

    /// The Python every wrapped command starts with: a signed-in user, and calls with the fixture's tokens.
    static let prelude = """
        import http.client, json, os, urllib.parse
        base = urllib.parse.urlparse(os.environ["SHARELANE_URL"])
        api = urllib.parse.quote(os.environ["CLOUDKIT_API_TOKEN"])
        web = ""
        def call(method, path, body=b"{}", token=True):
            global web
            connection = http.client.HTTPConnection(base.hostname, base.port, timeout=\(TestDeadlines.httpRead.components.seconds))
            if token:
                path += ("&" if "?" in path else "?") + "ckAPIToken=" + api
            connection.request(method, path, body=body)
            answer = connection.getresponse()
            following = answer.getheader("X-Apple-CloudKit-Web-Auth-Token")
            if following:
                web = urllib.parse.quote(following, safe="")
            text = answer.read().decode()
            connection.close()
            return answer.status, text
        call("POST", "/auth/signin", b'{"emailAddress": "many@example.com"}')
        def database(container, operation, body=b"{}"):
            return call("POST", "/database/1/%s/development/private/%s?ckWebAuthToken=%s" % (container, operation, web),
                        body)
        def make_zone(container):
            return database(container, "zones/modify",
                            b'{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Kept"}}}]}')
        def zone_names(container):
            status, text = database(container, "zones/list")
            return status, sorted(zone["zoneID"]["zoneName"] for zone in json.loads(text).get("zones", []))
        def reason(text):
            return json.loads(text).get("reason", "")

        """

    /// Runs `sharelane serve ARGUMENTS -- python3 SCRIPT` with `body` after the prelude as the script.
    func serve(_ arguments: [String], _ body: String) async throws -> SharelaneBinary.Result {
        let script = try scratch.write("check.py", Self.prelude + body)
        return try await SharelaneBinary.run(
            ["serve"] + arguments + ["--api-token", "world-end-token", "--", "python3", script], in: scratch.url)
    }

    @Test func aFullStoreNamesBothCallsAndAWorldRemovedMakesRoomForAnother() async throws {
        let result = try await serve(
            ["--store", "memory:", "--max-worlds", "3"],
            """
            for number in range(3):
                print("made", number, make_zone("iCloud.test.world%d" % number)[0])
            status, text = database("iCloud.test.world3", "zones/list")
            print("full", status, json.loads(text)["serverErrorCode"] if status != 200 else "")
            print("full reason", reason(text))
            status, text = call("DELETE", "/_sharelane/worlds/iCloud.test.world0", token=False)
            print("without the token", status)
            print("still full", zone_names("iCloud.test.world3")[0])
            status, text = call("DELETE", "/_sharelane/worlds/iCloud.test.world0")
            print("removed", status, text)
            print("new world", zone_names("iCloud.test.world3"))
            def console_overview():
                connection = http.client.HTTPConnection(base.hostname, base.port, timeout=\(TestDeadlines.httpRead.components.seconds))
                connection.request("POST", "/console/signin", body="token=world-end-token&next=/",
                                   headers={"Content-Type": "application/x-www-form-urlencoded"})
                answer = connection.getresponse()
                answer.read()
                cookie = answer.getheader("Set-Cookie").split(";")[0]
                connection.request("GET", "/", headers={"Cookie": cookie})
                page = connection.getresponse().read().decode()
                connection.close()
                return page
            print("console lists world1", "iCloud.test.world1" in console_overview())
            status, text = call("DELETE", "/_sharelane/worlds/iCloud.test.world1/development")
            print("removed one environment", status, text)
            print("console lists world1 after", "iCloud.test.world1" in console_overview())
            print("named again", zone_names("iCloud.test.world0"))
            status, text = call("DELETE", "/_sharelane/worlds/iCloud.test.nowhere")
            print("unknown", status, reason(text))
            status, text = call("DELETE", "/_sharelane/worlds/iCloud.test.world2/production")
            print("unknown environment", status, reason(text))
            status, text = call("DELETE", "/_sharelane/worlds/iCloud.test.world2/staging")
            print("bad environment", status, reason(text))
            status, text = call("DELETE", "/_sharelane/worlds/not-a-container")
            print("bad container", status, reason(text))
            print("world2 kept", zone_names("iCloud.test.world2"))
            """)
        #expect(result.status == 0, "\(result.output)")
        let out = result.stdout
        for number in 0..<3 { #expect(out.contains("made \(number) 200"), "\(result.output)") }
        #expect(out.contains("full 413 QUOTA_EXCEEDED"), "\(result.output)")
        // The refusal names both ways out.
        #expect(out.contains("DELETE /_sharelane/worlds/CONTAINER"), "\(result.output)")
        #expect(out.contains(#"POST /_sharelane/reset {"to": "empty"}"#), "\(result.output)")
        // Removing is a fixture call: refused without the API token, and nothing is freed.
        #expect(out.contains("without the token 401"), "\(result.output)")
        #expect(out.contains("still full 413"), "\(result.output)")
        #expect(out.contains(#"removed 200 {"removed":["iCloud.test.world0/development"]}"#), "\(result.output)")
        #expect(out.contains("new world (200, ['_defaultZone'])"), "\(result.output)")
        // A world removed and named again starts empty: its zone went with it.
        #expect(out.contains("named again (200, ['_defaultZone'])"), "\(result.output)")
        #expect(
            out.contains(#"removed one environment 200 {"removed":["iCloud.test.world1/development"]}"#),
            "\(result.output)")
        // The console's overview lists the worlds requests named: a world removed is no longer among them.
        #expect(out.contains("console lists world1 True"), "\(result.output)")
        #expect(out.contains("console lists world1 after False"), "\(result.output)")
        #expect(out.contains("unknown 404 this store holds no world iCloud.test.nowhere"), "\(result.output)")
        #expect(
            out.contains("unknown environment 404 this store holds no world iCloud.test.world2/production"),
            "\(result.output)")
        #expect(out.contains("bad environment 400 unknown environment \"staging\""), "\(result.output)")
        #expect(out.contains("bad container 400"), "\(result.output)")
        #expect(out.contains("world2 kept (200, ['Kept', '_defaultZone'])"), "\(result.output)")
    }

    @Test func resettingWorldsInMemoryToEmptyKeepsTheirNumberBounded() async throws {
        // Under a limit of two, twelve containers one after the other: each is filled, checked, then reset to
        // empty, by its container or with every world.
        let result = try await serve(
            ["--store", "memory:", "--max-worlds", "2"],
            """
            for number in range(12):
                container = "iCloud.test.passing%d" % number
                mine = json.dumps({"container": container, "to": "empty"}).encode()
                print("made", number, make_zone(container)[0], zone_names(container))
                if number % 2 == 0:
                    body = mine
                else:
                    # Every world, to empty or back to its seeded state: never seeded, it is emptied.
                    body = b'{"to": "empty"}' if number % 4 == 1 else b"{}"
                print("reset", number, call("POST", "/_sharelane/reset", body)[0])
                print("after", number, zone_names(container))
                call("POST", "/_sharelane/reset", mine)
            """)
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.stdout.contains("413"), "\(result.output)")
        for number in 0..<12 {
            #expect(result.stdout.contains("made \(number) 200 (200, ['Kept', '_defaultZone'])"), "\(result.output)")
            #expect(result.stdout.contains("reset \(number) 200"), "\(result.output)")
            #expect(result.stdout.contains("after \(number) (200, ['_defaultZone'])"), "\(result.output)")
        }
    }

    @Test func aFileStoresWorldRemovedTakesItsFileAndItsPlace() async throws {
        let store = scratch.file("worlds.sqlite")
        let result = try await serve(
            ["--store", "sqlite:" + store, "--max-worlds", "2"],
            """
            store = "\(store)"
            print("first", make_zone("iCloud.test.first")[0])
            print("second", make_zone("iCloud.test.second")[0])
            print("full", zone_names("iCloud.test.third")[0])
            second = store + ".worlds/iCloud.test.second/development.sqlite"
            print("file before", os.path.exists(second))
            print("removed", call("DELETE", "/_sharelane/worlds/iCloud.test.second")[0])
            print("file after", os.path.exists(second), os.path.exists(os.path.dirname(second)))
            print("third", make_zone("iCloud.test.third")[0])
            # The store file's own world: emptied, and the file holds none, so its place is free too.
            print("removed first", call("DELETE", "/_sharelane/worlds/iCloud.test.first")[0])
            print("fourth", zone_names("iCloud.test.fourth"))
            print("first again", zone_names("iCloud.test.first")[0])
            """)
        #expect(result.status == 0, "\(result.output)")
        let out = result.stdout
        #expect(out.contains("first 200") && out.contains("second 200"), "\(result.output)")
        #expect(out.contains("full 413"), "\(result.output)")
        #expect(out.contains("file before True"), "\(result.output)")
        #expect(out.contains("removed 200"), "\(result.output)")
        #expect(out.contains("file after False False"), "\(result.output)")
        #expect(out.contains("third 200"), "\(result.output)")
        #expect(out.contains("removed first 200"), "\(result.output)")
        #expect(out.contains("fourth (200, ['_defaultZone'])"), "\(result.output)")
        #expect(out.contains("first again 413"), "\(result.output)")
    }

    @Test func nothingKeptOfARemovedWorldBringsItBack() async throws {
        // A seeded world with a named snapshot of it: removed, neither its reset point, its snapshot copy nor
        // its people keep it (or its memory) alive.
        let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
        let result = try await serve(
            ["--store", "memory:", "--recipe", recipe],
            """
            lists = "iCloud.com.example.Lists"
            alice = os.environ["SHARELANE_WEB_AUTH_TOKEN_ALICE"]
            def alice_zones():
                status, text = call("POST", "/database/1/%s/development/private/zones/list?ckWebAuthToken=%s"
                                    % (lists, urllib.parse.quote(alice, safe="")))
                return status, sorted(zone["zoneID"]["zoneName"] for zone in json.loads(text).get("zones", []))
            print("seeded", alice_zones())
            print("snapshot", call("POST", "/_sharelane/snapshots/kept")[0])
            print("removed", call("DELETE", "/_sharelane/worlds/" + lists)[1])
            print("reset", call("POST", "/_sharelane/reset")[0])
            print("after reset", alice_zones())
            status, text = call("POST", "/_sharelane/snapshots/kept/restore")
            print("restore", status, reason(text))
            print("users", call("GET", "/_sharelane/users")[1])
            """)
        #expect(result.status == 0, "\(result.output)")
        let out = result.stdout
        #expect(out.contains("seeded (200, ['FamilyLists', "), "\(result.output)")
        #expect(out.contains("snapshot 200"), "\(result.output)")
        #expect(out.contains(#"removed {"removed":["iCloud.com.example.Lists/development"]}"#), "\(result.output)")
        // Its reset point went with it: a reset does not seed it again.
        #expect(out.contains("reset 200"), "\(result.output)")
        #expect(out.contains("after reset (200, ['_defaultZone'])"), "\(result.output)")
        // The snapshot held that world alone, so it went too.
        #expect(out.contains("restore 404 no snapshot is named kept"), "\(result.output)")
        #expect(out.contains(#"users {"users":{}}"#), "\(result.output)")
    }

    @Test func aLimitOfNoWorldIsRefused() async throws {
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--max-worlds", "0", "--", "true"], in: scratch.url)
        #expect(result.status != 0, "\(result.output)")
        #expect(result.stderr.contains("--max-worlds 0 holds no world: give 1 or more"), "\(result.output)")
    }
}
