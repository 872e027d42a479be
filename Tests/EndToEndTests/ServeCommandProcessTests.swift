import Foundation
import SharelaneTestSupport
import Testing

/// `serve … -- CMD` as a CI job cancels it: signals reach the command and everything it started, serve never
/// exits 0 for a cancelled run, and nothing of the fixture is left behind. And the command's edges: a program
/// that is not one, a port that is taken, an IPv6 host, two people whose tokens would share a variable.
@Suite final class ServeCommandProcessTests {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path

    init() throws {
        scratch = try TemporaryDirectory("e2e-serve-process")
    }

    /// A shell script in the scratch folder.
    func script(_ name: String, _ body: String) throws -> String {
        let path = try scratch.write(name, "#!/bin/sh\n" + body)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// What one signalled run left.
    struct Signalled {
        var status: Int32
        var stderr: String
        /// The processes the command wrote to `pids` (itself and what it started), still running or not.
        var pids: [Int32]
    }

    /// Starts `serve ARGUMENTS`, waits until the command wrote its pids to `pids` (one a line, all of them
    /// when `expected` lines are there), sends serve `signal`, and waits for serve to end.
    func signalled(_ arguments: [String], pids: String, expected: Int, signal: Int32) async throws -> Signalled {
        let errors = scratch.url.appendingPathComponent("serve-\(signal).err")
        let process = try StartedProcess(
            arguments, in: directory, log: scratch.url.appendingPathComponent("serve-\(signal).out"), errors: errors)
        defer { process.killBlocking() }
        @Sendable func written() -> [Int32] {
            ((try? String(contentsOfFile: pids, encoding: .utf8)) ?? "").split(separator: "\n")
                .compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
        }
        let pid = process.processIdentifier
        _ = await process.once({ written().count >= expected }) { kill(pid, signal) }
        // Not forever: a serve that does not stop is this test's failure, not a hung suite.
        let status = try await process.statusAfterSignal("serve was still running")
        return Signalled(
            status: status, stderr: (try? String(contentsOf: errors, encoding: .utf8)) ?? "", pids: written())
    }

    @Test func sigtermStopsABashCommandAndWhatItStartedAndServeExits143() async throws {
        let pids = scratch.file("bash.pids")
        let usersPath = scratch.file("users-path")
        // A shell waiting on a background job: the case that used to run to its end, serve then exiting 0.
        let run = try await signalled(
            [
                "serve", "--recipe", recipe, "--", "bash", "-c",
                "echo \"$SHARELANE_USERS\" > \(usersPath); sleep 120 & echo $$ >> \(pids); echo $! >> \(pids); wait",
            ], pids: pids, expected: 2, signal: SIGTERM)
        #expect(run.status == 143, "\(run.stderr)")
        #expect(await ProcessState.allGone(run.pids), "the command and its background job are stopped: \(run.pids)")
        let users = try String(contentsOfFile: usersPath, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(!users.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: users), "the users file with its tokens is removed")
    }

    @Test func sigtermStopsAPythonCommand() async throws {
        let pids = scratch.file("python.pids")
        let run = try await signalled(
            [
                "serve", "--recipe", recipe, "--", "python3", "-c",
                "import os, time; open('\(pids)', 'w').write('%d\\n' % os.getpid()); time.sleep(120)",
            ], pids: pids, expected: 1, signal: SIGTERM)
        #expect(run.status == 143, "\(run.stderr)")
        #expect(await ProcessState.allGone(run.pids))
    }

    @Test func aCommandThatTrapsTheSignalAndExitsZeroStillFailsTheRun() async throws {
        let pids = scratch.file("trap.pids")
        let caught = scratch.file("caught")
        let run = try await signalled(
            [
                "serve", "--recipe", recipe, "--", "sh", "-c",
                "trap 'echo yes > \(caught); exit 0' TERM; echo $$ > \(pids); while :; do sleep 0.1; done",
            ], pids: pids, expected: 1, signal: SIGTERM)
        #expect(FileManager.default.fileExists(atPath: caught), "the command's own trap ran")
        #expect(run.status == 143, "a cancelled run is not a passing one: \(run.stderr)")
    }

    @Test func sighupStopsTheCommandAndRemovesTheUsersFile() async throws {
        let pids = scratch.file("hup.pids")
        let usersPath = scratch.file("hup-users")
        let run = try await signalled(
            [
                "serve", "--recipe", recipe, "--", "sh", "-c",
                "echo \"$SHARELANE_USERS\" > \(usersPath); echo $$ > \(pids); sleep 120",
            ], pids: pids, expected: 1, signal: SIGHUP)
        #expect(run.status == 129, "\(run.stderr)")
        #expect(await ProcessState.allGone(run.pids))
        let users = try String(contentsOfFile: usersPath, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(!FileManager.default.fileExists(atPath: users))
    }

    @Test func aCommandThatIgnoresTheSignalIsKilledAfterTheGracePeriod() async throws {
        let pids = scratch.file("stubborn.pids")
        let run = try await signalled(
            [
                "serve", "--recipe", recipe, "--grace", "500ms", "--", "sh", "-c",
                "trap '' TERM; echo $$ > \(pids); while :; do sleep 0.1; done",
            ], pids: pids, expected: 1, signal: SIGTERM)
        #expect(run.status == 128 + SIGKILL, "\(run.stderr)")
        #expect(await ProcessState.allGone(run.pids))
    }

    @Test func theCommandStartsWithNoSignalBlockedOrIgnored() async throws {
        // The command itself reads its own state (a shell would not do: it blocks signals while it waits for
        // the commands it runs).
        let result = try await SharelaneBinary.run(
            ["serve", "--recipe", recipe, "--", "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"], in: directory)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("SigBlk:\t0000000000000000"), "\(result.stdout)")
        // SIGINT, SIGTERM and SIGHUP at their defaults (signals 32 and 33 are the C library's own).
        let ignored = result.stdout.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
            .flatMap { UInt64($0.dropFirst("SigIgn:\t".count), radix: 16) }
        #expect(ignored.map { $0 & 0x7FFF_FFFF } == 0, "\(result.stdout)")
        // A shell waiting for its background job ends.
        let waited = try await SharelaneBinary.run(
            [
                "serve", "--recipe", recipe, "--", "sh", "-c",
                "sleep 0.2 & wait; stat -c '%a' \"$SHARELANE_USERS\" \"$(dirname \"$SHARELANE_USERS\")\"",
            ], in: directory)
        #expect(waited.status == 0, "\(waited.output)")
        // The users file and its folder are this user's only.
        #expect(waited.stdout == "600\n700\n", "\(waited.stdout)")
    }

    @Test func theCommandIsExecutedAsItIsNeverThroughEnv() async throws {
        let help = try await SharelaneBinary.run(["serve", "--recipe", recipe, "--", "--help"], in: directory)
        #expect(help.status == 127, "\(help.output)")
        #expect(help.stderr.contains("no program named --help on PATH"), "\(help.stderr)")
        #expect(!help.stdout.contains("Usage"), "\(help.stdout)")
        let assignment = try await SharelaneBinary.run(
            ["serve", "--recipe", recipe, "--", "FOO=bar"], in: directory)
        #expect(assignment.status == 127, "\(assignment.output)")
        // Never the environment, which holds every token.
        #expect(!assignment.output.contains("SHARELANE_WEB_AUTH_TOKEN"), "\(assignment.output)")
        #expect(!assignment.output.contains("CLOUDKIT_API_TOKEN="), "\(assignment.output)")
    }

    @Test func aScriptStillOpenForWritingStartsOnceItsWriterLetsGo() async throws {
        // A build step or another thread's fork can hold a script just written open for a moment: the kernel
        // refuses to execute it meanwhile (ETXTBSY), and serve once ended with 126 "Text file busy".
        let path = try script("fresh.sh", "echo started\n")
        let writer = open(path, O_WRONLY | O_CLOEXEC)
        #expect(writer >= 0)
        // Let go after a moment by a timer of dispatch's, set now, not a task: on a busy machine the shared
        // pool's threads may all be taken past serve's two seconds of trying again.
        let (released, release) = AsyncStream<Void>.makeStream()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1_200)) {
            close(writer)
            release.finish()
        }
        let result = try await SharelaneBinary.run(["serve", "--recipe", recipe, "--", path], in: directory)
        for await _ in released {}
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("started"), "\(result.output)")
    }

    @Test func aPortThatIsTakenEndsServeWithAMessage() async throws {
        // A listener of this test's own holds a port.
        let socket = listeningSocket()
        defer { close(socket.descriptor) }
        let (recipe, directory) = (self.recipe, self.directory)
        let result = try await SharelaneBinary.runProcess(
            SharelaneBinary.executable, ["serve", "--recipe", recipe, "--port", "\(socket.port)", "--", "true"],
            in: directory)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("another program listens on port \(socket.port)"), "\(result.stderr)")
        // A documentation address (RFC 5737) this machine does not have: one may be a machine's own.
        let foreign = try #require(addressThisMachineLacks(), "every documentation address is this machine's")
        let unreachable = try await SharelaneBinary.runProcess(
            SharelaneBinary.executable, ["serve", "--recipe", recipe, "--host", foreign, "--", "true"], in: directory)
        #expect(unreachable.status == 1, "\(unreachable.output)")
        #expect(unreachable.stderr.contains("\(foreign) is not an address of this machine"), "\(unreachable.stderr)")
    }

    @Test func anIPv6HostIsWrittenInBrackets() async throws {
        // A machine without IPv6 loopback cannot listen on ::1 at all.
        let inet6 = (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8)) ?? ""
        try #require(inet6.contains("00000000000000000000000000000001"), "this machine has no ::1")
        let result = try await SharelaneBinary.run(
            [
                "serve", "--recipe", recipe, "--host", "::1", "--", "sh", "-c",
                "echo \"$SHARELANE_URL\"; curl -s -o /dev/null -w '%{http_code}\\n' \"$SHARELANE_URL/\"",
            ], in: directory)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.range(of: #"^http://\[::1\]:\d+\n401\n$"#, options: .regularExpression) != nil,
            "\(result.stdout)")
    }

    @Test func twoHandlesThatShareATokenVariableStopSeeding() async throws {
        let clash = try scratch.write(
            "clash.yaml",
            """
            sharelane: 1
            name: clash
            users:
              ann-lee: { email: ann@example.com }
              ann_lee: { email: ann.lee@example.com }
            owner: ann-lee
            zones: { A: {} }
            """)
        let marker = scratch.file("ran")
        let result = try await SharelaneBinary.run(
            ["serve", "--recipe", clash, "--", "touch", marker], in: directory)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains(
                "clash.yaml:5:3: error: the users 'ann-lee' and 'ann_lee' would both have their token in "
                    + "SHARELANE_WEB_AUTH_TOKEN_ANN_LEE"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func aFixtureStartsFromItsRecipeAloneAndLeavesTheProjectStoreAlone() async throws {
        // A project folder: the recipe, and a command that adds a record as alice.
        let project = directory.appendingPathComponent("project")
        try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
        let recipeFile = project.appendingPathComponent("sharelane.yaml")
        try FileManager.default.copyItem(atPath: recipe, toPath: recipeFile.path)
        let addAndCount = try script(
            "add.sh",
            """
            python3 - <<'PY'
            import json, os, urllib.parse, urllib.request
            query = urllib.parse.urlencode({"ckAPIToken": os.environ["CLOUDKIT_API_TOKEN"],
                                            "ckWebAuthToken": os.environ["SHARELANE_WEB_AUTH_TOKEN_ALICE"]})
            base = "%s/database/1/%s/development/private/records/" % (os.environ["SHARELANE_URL"],
                os.environ["CLOUDKIT_CONTAINER"])
            def call(op, body):
                request = urllib.request.Request(base + op + "?" + query, data=json.dumps(body).encode())
                return json.load(urllib.request.urlopen(request))
            found = call("lookup", {"zoneID": {"zoneName": "FamilyLists"}, "records": [{"recordName": "stale"}]})
            print("stale found:", "serverErrorCode" not in found["records"][0])
            call("modify", {"zoneID": {"zoneName": "FamilyLists"}, "operations": [{"operationType": "forceReplace",
                "record": {"recordName": "stale", "recordType": "Item", "fields": {"title": {"value": "x"}}}}]})
            PY
            """)
        for run in 1...2 {
            let result = try await SharelaneBinary.run(
                ["serve", "--recipe", recipeFile.path, "--", addAndCount], in: project)
            #expect(result.status == 0, "run \(run): \(result.output)")
            #expect(result.stdout.contains("stale found: False"), "run \(run) met a record of an earlier run")
            #expect(result.stderr.contains("over memory:"), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: project.appendingPathComponent(".sharelane").path))
    }
}

/// A TCP listener on a free loopback port, holding it for a test.
private func listeningSocket() -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(descriptor, $0, length) }
    }
    listen(descriptor, 1)
    withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}

/// An IPv4 documentation address no interface of this machine has (binding to it fails with
/// EADDRNOTAVAIL), or nil when the machine has them all.
private func addressThisMachineLacks() -> String? {
    ["203.0.113.7", "198.51.100.7", "192.0.2.7"].first { candidate in
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(candidate)
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound != 0 && errno == EADDRNOTAVAIL
    }
}
