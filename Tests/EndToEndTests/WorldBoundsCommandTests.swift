import Foundation
import GRDB
import SharelaneTestSupport
import Testing

/// `sharelane serve` on a store file, through the built binary: a flood of container names under a low limit
/// of open files, a world file damaged by hand, and imports that must be all or nothing.
@Suite final class WorldBoundsCommandTests {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path

    init() throws {
        scratch = try TemporaryDirectory("e2e-worlds")
    }

    /// A Python script in the scratch folder, run by `python3` as serve's wrapped command.
    func python(_ name: String, _ body: String) throws -> String {
        try scratch.write(name, body)
    }

    /// `sharelane serve ARGUMENTS` with at most 256 open files, as a small CI runner or a tight `ulimit` has.
    /// The descriptors this test process has open (a parallel test run holds hundreds) are closed first: one
    /// numbered past the limit would reach serve, and starting its command fails on it (EBADF), which is
    /// serve's child process handling, not what this measures.
    func serveUnderLowFileLimit(_ arguments: [String]) async throws -> SharelaneBinary.Result {
        let quoted = ([SharelaneBinary.executable.path, "serve"] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let script =
            #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; "#
            + "ulimit -n 256; exec \(quoted)"
        return try await SharelaneBinary.runProcess(URL(fileURLWithPath: "/bin/bash"), ["-c", script], in: directory)
    }

    /// The Python every wrapped command starts with: calls with the fixture's tokens.
    static let prelude = """
        import http.client, json, os, urllib.parse
        base = urllib.parse.urlparse(os.environ["SHARELANE_URL"])
        api = urllib.parse.quote(os.environ["CLOUDKIT_API_TOKEN"])
        connection = http.client.HTTPConnection(base.hostname, base.port, timeout=\(TestDeadlines.httpRead.components.seconds))
        def call(method, path, body=b"{}"):
            global connection
            try:
                connection.request(method, path, body=body)
                answer = connection.getresponse()
            except (http.client.HTTPException, OSError):
                connection = http.client.HTTPConnection(base.hostname, base.port, timeout=\(TestDeadlines.httpRead.components.seconds))
                connection.request(method, path, body=body)
                answer = connection.getresponse()
            global web
            # Each answer hands out the next web auth token, as CloudKit's do; a client goes on with it.
            following = answer.getheader("X-Apple-CloudKit-Web-Auth-Token")
            if following:
                web = urllib.parse.quote(following, safe="")
            return answer.status, answer.read().decode()
        web = ""
        status, text = call("POST", "/auth/signin?ckAPIToken=" + api, b'{"emailAddress": "flood@example.com"}')
        def zones(container):
            return call("POST", "/database/1/%s/development/private/zones/list?ckAPIToken=%s&ckWebAuthToken=%s"
                        % (container, api, web))

        """

    @Test func aFloodOfContainerNamesUnderALowFileLimitNeverAnswers5xx() async throws {
        let store = scratch.file("flood.sqlite")
        let flood = try python(
            "flood.py",
            Self.prelude + """
                counts = {}
                for number in range(5000):
                    status, text = zones("iCloud.com.example.flood%d" % number)
                    counts[status] = counts.get(status, 0) + 1
                    if status >= 500 and counts[status] == 1:
                        print("first 5xx:", number, text)
                print("statuses", json.dumps(counts, sort_keys=True))
                status, text = call("POST", "/_sharelane/reset?ckAPIToken=" + api)
                print("reset", status)
                """)
        let first = try await serveUnderLowFileLimit([
            "--store", "sqlite:" + store, "--api-token", "flood-token", "--", "python3", flood,
        ])
        #expect(first.status == 0, "\(first.output)")
        // 500 worlds (the store's limit) are made; every other name is refused as CloudKit refuses a quota.
        #expect(first.stdout.contains(#"statuses {"200": 500, "413": 4500}"#), "\(first.output)")
        #expect(first.stdout.contains("reset 200"), "\(first.output)")
        let again = try python(
            "again.py",
            Self.prelude + """
                print("reset", call("POST", "/_sharelane/reset?ckAPIToken=" + api)[0])
                print("old world", zones("iCloud.com.example.flood1")[0])
                print("new world", zones("iCloud.com.example.flood4999")[0])
                """)
        let second = try await serveUnderLowFileLimit([
            "--store", "sqlite:" + store, "--api-token", "flood-token", "--", "python3", again,
        ])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.stdout.contains("reset 200"), "\(second.output)")
        #expect(second.stdout.contains("old world 200"), "\(second.output)")
        #expect(second.stdout.contains("new world 413"), "\(second.output)")
    }

    @Test func aDamagedWorldFileCostsThatWorldAndNoAnswerNamesAPath() async throws {
        let store = scratch.file("damaged.sqlite")
        let folder = scratch.file("damaged.sqlite.worlds/iCloud.com.example.Broken")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: folder + "/development.sqlite"))
        let check = try python(
            "damaged.py",
            Self.prelude + """
                print("good", zones("iCloud.com.example.Good")[0])
                status, text = zones("iCloud.com.example.Broken")
                print("broken", status, json.loads(text)["serverErrorCode"])
                print("answer", text)
                print("reset", call("POST", "/_sharelane/reset?ckAPIToken=" + api)[0])
                """)
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "sqlite:" + store, "--", "python3", check], in: directory)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("good 200"), "\(result.output)")
        #expect(result.stdout.contains("broken 500 INTERNAL_ERROR"), "\(result.output)")
        #expect(result.stdout.contains("reset 200"), "\(result.output)")
        let answer = result.stdout.split(separator: "\n").first { $0.hasPrefix("answer") } ?? ""
        #expect(answer.contains("iCloud.com.example.Broken/development"), "\(answer)")
        #expect(!answer.contains(scratch.path), "\(answer)")
        #expect(!answer.contains("/tmp") && !answer.contains("/home") && !answer.contains("/var"), "\(answer)")
        // Whoever runs serve is told which world, and where its file is.
        #expect(result.stderr.contains("iCloud.com.example.Broken/development cannot be opened"), "\(result.stderr)")
    }

    /// Every file under `folder` and its bytes.
    static func contents(of folder: String) throws -> [String: Data] {
        var found: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let name = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = folder + "/" + name
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            found[name] = isDirectory.boolValue ? Data("folder".utf8) : try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return found
    }

    /// A store in a folder of its own with the demo recipe seeded into it, and a snapshot file of the same
    /// recipe with a second world (the production environment) to change.
    func seededStoreAndSnapshot() async throws -> (folder: String, store: String, snapshot: [String: Any]) {
        let folder = scratch.file("store")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = folder + "/store.sqlite"
        let seeded = try await SharelaneBinary.run(
            ["serve", "--store", "sqlite:" + store, "--recipe", recipe, "--lane", "demo", "--", "true"], in: directory)
        #expect(seeded.status == 0, "\(seeded.output)")
        let export = scratch.file("export.json")
        let exported = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--recipe", recipe, "--export-on-exit", export, "--", "true"],
            in: directory)
        #expect(exported.status == 0, "\(exported.output)")
        var file = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: export))) as? [String: Any])
        var worlds = try #require(file["worlds"] as? [[String: Any]])
        #expect(worlds.count == 1)
        var second = worlds[0]
        second["environment"] = "production"
        worlds.append(second)
        file["worlds"] = worlds
        return (folder, store, file)
    }

    func write(_ file: [String: Any], _ name: String) throws -> String {
        let path = scratch.file(name)
        try JSONSerialization.data(withJSONObject: file).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aPartlyBadImportLeavesTheStoreAsItWasByteForByte() async throws {
        var (folder, store, file) = try await seededStoreAndSnapshot()
        var worlds = try #require(file["worlds"] as? [[String: Any]])
        worlds[1]["database"] = "this is not base64!"
        file["worlds"] = worlds
        let bad = try write(file, "bad.json")
        let before = try Self.contents(of: folder)
        #expect(before.keys.contains("store.sqlite"))
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "sqlite:" + store, "--import", bad, "--", "true"], in: directory)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains("world 2 of 2 (iCloud.com.example.Lists/production): its database is not base64"),
            "\(result.stderr)")
        #expect(try Self.contents(of: folder) == before, "the store changed")
        // The good half alone goes in.
        file["worlds"] = [worlds[0]]
        let good = try write(file, "good.json")
        let imported = try await SharelaneBinary.run(
            ["serve", "--store", "sqlite:" + store, "--import", good, "--", "true"], in: directory)
        #expect(imported.status == 0, "\(imported.output)")
        #expect(try Self.contents(of: folder) != before)
    }

    @Test func anImportWithATriggerIsRefusedNamingTheWorld() async throws {
        var (folder, store, file) = try await seededStoreAndSnapshot()
        var worlds = try #require(file["worlds"] as? [[String: Any]])
        let encoded = try #require(worlds[1]["database"] as? String)
        let bytes = try #require(Data(base64Encoded: encoded))
        let database = scratch.file("trigger.sqlite")
        try bytes.write(to: URL(fileURLWithPath: database))
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in
            try db.execute(sql: "CREATE TRIGGER audit AFTER UPDATE ON counter BEGIN DELETE FROM user; END")
            try db.execute(sql: "CREATE VIEW everyone AS SELECT * FROM user")
        }
        try queue.close()
        worlds[1]["database"] = try Data(contentsOf: URL(fileURLWithPath: database)).base64EncodedString()
        file["worlds"] = worlds
        let bad = try write(file, "trigger.json")
        let before = try Self.contents(of: folder)
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "sqlite:" + store, "--import", bad, "--", "true"], in: directory)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("world 2 of 2 (iCloud.com.example.Lists/production)"), "\(result.stderr)")
        #expect(result.stderr.contains("trigger \"audit\""), "\(result.stderr)")
        #expect(try Self.contents(of: folder) == before, "the store changed")
    }
}
