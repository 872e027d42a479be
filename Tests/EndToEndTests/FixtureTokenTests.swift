import Foundation
import SharelaneTestSupport
import Testing

/// The fixture's people keep their web auth tokens for the whole run: a test suite that reads
/// `SHARELANE_WEB_AUTH_TOKEN_BOB` once, as Docs/Testing.md shows, is answered however many requests it
/// sends, through a real `sharelane serve --recipe … -- CMD`. With `--strict-tokens` they are single-use, as
/// CloudKit's reference has every token.
@Suite struct FixtureTokenTests {
    let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path

    /// A Python script run by serve as its command: `count` requests over `workers` kept-alive connections,
    /// every one with Bob's environment token, then the tally (`answered N of M`, each status, the first
    /// refusal) and whether `GET /_sharelane/users` still hands out the same token.
    static func hammer(count: Int, workers: Int) -> String {
        """
        #!/bin/sh
        exec python3 - <<'PY'
        import http.client, json, os, threading, time, urllib.parse
        base = urllib.parse.urlsplit(os.environ["SHARELANE_URL"])
        token = os.environ["SHARELANE_WEB_AUTH_TOKEN_BOB"]
        api = os.environ["CLOUDKIT_API_TOKEN"]
        query = urllib.parse.urlencode({"ckAPIToken": api, "ckWebAuthToken": token})
        path = "/database/1/%s/%s/shared/zones/list?%s" % (
            os.environ["CLOUDKIT_CONTAINER"], os.environ["CLOUDKIT_ENVIRONMENT"], query)
        statuses, refusals, lock = {}, [], threading.Lock()
        def work(n):
            connection = http.client.HTTPConnection(base.hostname, base.port, timeout=\(TestDeadlines.httpRead.components.seconds))
            for _ in range(n):
                connection.request("POST", path, body=b"{}", headers={"Content-Type": "text/plain"})
                answer = connection.getresponse()
                body = answer.read()
                with lock:
                    statuses[answer.status] = statuses.get(answer.status, 0) + 1
                    if answer.status != 200 and not refusals:
                        refusals.append(body.decode()[:300])
        started = time.time()
        threads = [threading.Thread(target=work, args=(\(count / workers),)) for _ in range(\(workers))]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        print("answered %d of %d in %.1f s" % (statuses.get(200, 0), \(count), time.time() - started))
        print("statuses", sorted(statuses.items()), "first refusal", refusals[:1])
        users = "%s/_sharelane/users?%s" % (os.environ["SHARELANE_URL"], urllib.parse.urlencode({"ckAPIToken": api}))
        import urllib.request
        listed = json.load(urllib.request.urlopen(users))["users"]["bob"]["webAuthToken"]
        print("users endpoint hands out the same token:", listed == token)
        PY
        """
    }

    @Test(
        "10,000 requests with one environment token are all answered, and GET /_sharelane/users hands out that token again"
    )
    func anEnvironmentTokenServesTenThousandRequests() async throws {
        let scratch = try TemporaryDirectory("fixture-tokens")
        let script = try scratch.write("hammer.sh", Self.hammer(count: 10_000, workers: 8))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--recipe", recipe, "--", script], in: scratch.url)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("answered 10000 of 10000"), "\(result.output)")
        #expect(result.stdout.contains("users endpoint hands out the same token: True"), "\(result.output)")
    }

    @Test("with --strict-tokens the environment token is good for one request, as CloudKit's reference says")
    func strictTokensStaySingleUse() async throws {
        let scratch = try TemporaryDirectory("fixture-tokens")
        let script = try scratch.write("hammer.sh", Self.hammer(count: 2, workers: 1))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let result = try await SharelaneBinary.run(
            ["serve", "--store", "memory:", "--strict-tokens", "--recipe", recipe, "--", script], in: scratch.url)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("answered 1 of 2"), "\(result.output)")
        #expect(result.stdout.contains("already used"), "\(result.output)")
        #expect(result.stdout.contains("users endpoint hands out the same token: False"), "\(result.output)")
    }
}
