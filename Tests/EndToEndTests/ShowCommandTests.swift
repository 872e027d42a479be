import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane show`, run as a user would, on a store the demo lane filled.
@Suite final class ShowCommandTests {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    let store: String

    init() throws {
        scratch = try TemporaryDirectory("e2e")
        store = "sqlite:" + scratch.file("store.sqlite")
    }

    @Test func anEmptyStoreSaysSo() async throws {
        let result = try await SharelaneBinary.run(["show"], in: directory)
        #expect(result.status == 0)
        // It says which world it read: a store holds a world for each container and environment.
        #expect(
            result.stdout.contains(
                "The store sqlite:.sharelane/store.sqlite (iCloud.local.sharelane, development) is empty."),
            "\(result.stdout)")
    }

    @Test func unknownStoresAndUsersAreClearErrors() async throws {
        let scheme = try await SharelaneBinary.run(["show", "--store", "ftp:somewhere"], in: directory)
        #expect(scheme.status == 1)
        #expect(scheme.stderr.contains("unknown store 'ftp:somewhere'"))
        let user = try await SharelaneBinary.run(
            ["show", "--store", store, "--as", "nobody@example.com"], in: directory)
        #expect(user.status == 1)
        #expect(user.stderr.contains("no user 'nobody@example.com' in \(store): --as takes a handle"), "\(user.output)")
    }

    @Test func eachUserSeesTheirOwnView() async throws {
        let demo = try await SharelaneBinary.run(["run", "demo", "Recipes/sharelane.yaml", "--store", store])
        #expect(demo.status == 0, "\(demo.output)")

        let bob = try await SharelaneBinary.run(["show", "--store", store, "--as", "bob@example.com"], in: directory)
        #expect(bob.status == 0)
        let alice = "_50e0189ca0f60ad4c4efa63266de4996"
        #expect(
            bob.stdout.contains("shared database\n  zone FamilyLists (owner alice@example.com (\(alice)))"),
            "\(bob.stdout)")
        #expect(bob.stdout.contains("      bob@example.com: read-write, private-user, accepted"))
        #expect(bob.stdout.contains("      record eggs (Todo)\n        done: 0\n        title: \"Eggs\""))
        #expect(!bob.stdout.contains("zone Trips"))

        let carol = try await SharelaneBinary.run(
            ["show", "--store", store, "--as", "carol@example.com", "--database", "shared", "--zone", "Trips"],
            in: directory)
        #expect(carol.status == 0)
        #expect(carol.stdout.contains("zone Trips (owner alice@example.com (\(alice)))"), "\(carol.stdout)")
        #expect(carol.stdout.contains("record italy (Group)"))
        #expect(carol.stdout.contains("carol@example.com: read-only, public-user, accepted"))
        #expect(!carol.stdout.contains("FamilyLists"))
        #expect(!carol.stdout.contains("public database"))

        let everyone = try await SharelaneBinary.run(
            ["show", "--store", store, "--database", "private"], in: directory)
        #expect(everyone.status == 0)
        #expect(
            everyone.stdout.contains(
                "user alice@example.com (\(alice)), Alice Appleseed\n  private database\n    zone FamilyLists"))
        #expect(everyone.stdout.contains("user dana@example.com"))
    }

    @Test("show over http: shows the recipe's users, and --as takes a recipe handle")
    func showOverHTTP() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let demo = try await server.run(["run", "demo", "Recipes/sharelane.yaml"])
        #expect(demo.status == 0, "\(demo.output)")
        let everyone = try await server.run(["show"])
        #expect(everyone.status == 0, "\(everyone.output)")
        #expect(everyone.stdout.contains("Store \(server.url) (iCloud.com.example.Lists, development): 4 users"))
        #expect(everyone.stdout.contains("user bob@example.com"))
        #expect(everyone.stdout.contains("record alice-card (MyUser)"))
        let bob = try await server.run(["show", "--as", "bob", "--database", "shared"])
        #expect(bob.status == 0, "\(bob.output)")
        #expect(bob.stdout.contains("Store \(server.url) (iCloud.com.example.Lists, development), as bob@example.com"))
        #expect(bob.stdout.contains("zone FamilyLists (owner "))
        #expect(bob.stdout.contains("record eggs (Todo)"))
        let nobody = try await server.run(["show", "--as", "nobody"])
        #expect(nobody.status == 1)
        #expect(
            nobody.stderr.contains("--as takes a handle of the recipe (alice, bob, carol, dana)"), "\(nobody.output)")
    }

    @Test("show --zone shows that zone and leaves the public database out instead of calling it empty")
    func zoneFilterLeavesThePublicDatabaseOut() async throws {
        let demo = try await SharelaneBinary.run(["run", "demo", "Recipes/sharelane.yaml", "--store", store])
        #expect(demo.status == 0, "\(demo.output)")
        let zone = try await SharelaneBinary.run(["show", "--store", store, "--zone", "FamilyLists"], in: directory)
        #expect(zone.status == 0)
        #expect(zone.stdout.contains("zone FamilyLists"))
        #expect(!zone.stdout.contains("public database"), "\(zone.stdout)")
        let publicZone = try await SharelaneBinary.run(
            ["show", "--store", store, "--zone", "_defaultZone", "--database", "public"], in: directory)
        #expect(publicZone.stdout.contains("record alice-card (MyUser)"), "\(publicZone.stdout)")
    }

    @Test("cloudkit:CONTAINER/ENVIRONMENT names the container and environment; a malformed one is a clear error")
    func cloudKitStoreNamesItsContainer() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let environment = [
            "CLOUDKIT_API_TOKEN": server.apiToken, "CLOUDKIT_WEB_AUTH_TOKEN": "web", "CLOUDKIT_BASE_URL": server.url,
        ]
        let named = try await SharelaneBinary.run(
            ["show", "--store", "cloudkit:iCloud.com.example.Other/production", "--as", "bob@example.com"],
            in: directory, environment: environment)
        #expect(named.status == 1)
        #expect(named.stderr.contains("cloudkit:iCloud.com.example.Other/production"), "\(named.output)")
        #expect(server.log.contains("/database/1/iCloud.com.example.Other/production/"), "\(server.log)")
        let bad = try await SharelaneBinary.run(["show", "--store", "cloudkit:x/staging"], in: directory)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("is not cloudkit:, cloudkit:CONTAINER or cloudkit:CONTAINER/ENVIRONMENT"))
    }
}

/// Several processes opening one new store file at once.
@Suite struct ConcurrentOpenTests {
    @Test("six processes opening one new store file at once all succeed")
    func sixProcessesOpenANewStore() throws {
        let scratch = try TemporaryDirectory("e2e")
        let directory = scratch.url
        for round in 0..<3 {
            let store = "sqlite:" + directory.appendingPathComponent("new-\(round).sqlite").path
            var processes: [(Process, URL, ProcessExit)] = []
            for index in 0..<6 {
                let err = directory.appendingPathComponent("err-\(round)-\(index)")
                _ = FileManager.default.createFile(atPath: err.path, contents: nil)
                let process = Process()
                process.executableURL = SharelaneBinary.executable
                process.arguments = ["show", "--store", store]
                process.currentDirectoryURL = directory
                process.standardOutput = FileHandle.nullDevice
                process.standardError = try FileHandle(forWritingTo: err)
                processes.append((process, err, ProcessExit(process)))
            }
            for (process, _, _) in processes { try process.run() }
            for (process, err, exit) in processes {
                _ = exit.statusBlocking(within: TestDeadlines.processEnd)
                let text = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
                #expect(process.terminationStatus == 0, "round \(round): \(text)")
                #expect(!text.contains("already exists"), "\(text)")
            }
        }
    }
}

/// Values that hold terminal control characters are shown escaped by every human output and kept exact in
/// JSON.
@Suite struct EscapedOutputTests {
    @Test("plan, show and lane output escape ESC and CR in values and names; plan --format json keeps them")
    func controlCharactersAreEscaped() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let directory = scratch.url
        let recipe = directory.appendingPathComponent("r.yaml").path
        try #"""
        sharelane: 1
        name: escapes
        users: { alice: { email: alice@example.com } }
        zones:
          Notes:
            records:
              n1: { type: Note, fields: { title: "safe\e[2J\rforged line" } }
        lanes:
          check:
            steps:
              - expect: { field: { zone: Notes, record: n1, name: title, equals: "other\e[31m" } }
        """#.write(toFile: recipe, atomically: true, encoding: .utf8)
        let store = "sqlite:" + directory.appendingPathComponent("s.sqlite").path
        let plan = try await SharelaneBinary.run(["plan", recipe, "--store", store], in: directory)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(!plan.stdout.contains("\u{1B}"), "a raw ESC reached the terminal")
        #expect(!plan.stdout.contains("\r"))
        #expect(plan.stdout.contains(#"title: "safe\u{1B}[2J\rforged line""#), "\(plan.stdout)")
        let json = try await SharelaneBinary.run(["plan", recipe, "--store", store, "--format", "json"], in: directory)
        #expect(json.stdout.contains(#"safe\u001b[2J\rforged line"#), "\(json.stdout)")
        let apply = try await SharelaneBinary.run(["apply", recipe, "--store", store, "--yes"], in: directory)
        #expect(apply.status == 0, "\(apply.output)")
        let show = try await SharelaneBinary.run(["show", "--store", store], in: directory)
        #expect(!show.stdout.contains("\u{1B}") && !show.stdout.contains("\r"), "\(show.stdout)")
        #expect(show.stdout.contains(#"title: "safe\u{1B}[2J\rforged line""#), "\(show.stdout)")
        let lane = try await SharelaneBinary.run(["run", "check", recipe, "--store", store], in: directory)
        #expect(lane.status == 1)
        #expect(!lane.output.contains("\u{1B}") && !lane.output.contains("\r"), "\(lane.output)")
        #expect(lane.output.contains(#"other\u{1B}[31m"#), "\(lane.output)")
    }
}
