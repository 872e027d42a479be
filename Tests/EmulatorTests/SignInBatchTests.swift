import AsyncHTTPClient
import CloudKitWire
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// Many users signed in a request (`POST /auth/signin/batch`), as the `http:` store signs in a recipe's users.
@Suite struct SignInBatchTests {
    /// A client that waits for its connection as long as a request may take.
    static let patientClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(TestDeadlines.httpConnect.components.seconds)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    @Test("250 users sign in in 2 requests, each with a token of their own; a bad address fails alone")
    func manyUsersInFewRequests() async throws {
        try await EmulatorHarness.withEmulator { base in
            // The count is of the requests sent: a connection the store gives up on within the fail-fast
            // client's 2 s (a suite keeping both cores busy) is sent again and counted, although the batch is
            // the same. A patient client counts only what the batching decides.
            let store = WebServicesStore(
                endpoint: .emulator(
                    url: base, apiToken: EmulatorHarness.apiToken, container: EmulatorHarness.container,
                    environment: EmulatorHarness.environment),
                retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.05),
                httpClient: Self.patientClient, logger: EmulatorHarness.quiet)
            var users = (1...250).map { UserSignIn(email: "user\($0)@example.com", name: "User \($0)") }
            users[7] = UserSignIn(email: "not an address", name: nil)
            let before = store.requestCount
            let results = try await store.signIn(users)
            #expect(store.requestCount - before == 2)
            #expect(results.count == 250)
            let failure = try #require(results[7].failureValue)
            #expect(failure.code == .badRequest)
            let signedIn = results.enumerated().compactMap { $0.offset == 7 ? nil : try? $0.element.get() }
            #expect(signedIn.count == 249)
            #expect(signedIn.first?.email == "user1@example.com" && signedIn.first?.name == "User 1")
            #expect(signedIn.last?.email == "user250@example.com")
            #expect(Set(signedIn.map(\.recordName)).count == 249)
            // Each acts as themselves with the token the batch handed out: no sign-in of their own.
            let requests = store.requestCount
            let last = try #require(signedIn.last)
            #expect(try await store.currentUser(as: last.recordName).recordName == last.recordName)
            #expect(store.requestCount - requests == 1)
        }
    }

    @Test("a batch with createUser false creates nobody: an unknown address is nil, a known one signs in")
    func existingOnlyCreatesNobody() async throws {
        try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: "Alice")
            let results = try await EmulatorHarness.store(base).signInExisting([
                "ALICE@example.com", "nobody@example.com",
            ])
            #expect(try results[0].get()?.recordName == alice.recordName)
            #expect(try results[1].get() == nil)
            // Still nobody: the look-up made no user.
            #expect(try await EmulatorHarness.store(base).signInExisting(email: "nobody@example.com") == nil)
        }
    }

    @Test("the batch answers one entry a user, in order, as a client reads it from the wire")
    func wireAnswer() async throws {
        try await EmulatorHarness.withEmulator { base in
            let answer = try await EmulatorHarness.raw(
                base, WireSpelling.signInBatchPath, query: ["ckAPIToken": EmulatorHarness.apiToken],
                body: """
                    {"users":[{"emailAddress":"bob@example.com","name":"Bob"},{"emailAddress":"carol@"}],
                     "container":"\(EmulatorHarness.container)","environment":"\(EmulatorHarness.environment)"}
                    """)
            #expect(answer.status == 200)
            let users = try #require(answer.json["users"] as? [[String: Any]])
            #expect(users.count == 2)
            #expect(users[0]["emailAddress"] as? String == "bob@example.com")
            #expect((users[0]["ckWebAuthToken"] as? String)?.isEmpty == false)
            #expect((users[0]["userRecordName"] as? String)?.hasPrefix("_") == true)
            #expect(users[1]["serverErrorCode"] as? String == "BAD_REQUEST")
            #expect(users[1]["ckWebAuthToken"] == nil)
            // More than CloudKit's 200 a request is refused whole, as records/modify's operations are.
            let many = (0...200).map { #"{"emailAddress":"u\#($0)@example.com"}"# }.joined(separator: ",")
            let refused = try await EmulatorHarness.raw(
                base, WireSpelling.signInBatchPath, query: ["ckAPIToken": EmulatorHarness.apiToken],
                body: #"{"users":[\#(many)]}"#)
            #expect(refused.status == 400)
            #expect(refused.text.contains("201 users in one request"))
            // Without the API token, nothing.
            let anonymous = try await EmulatorHarness.raw(
                base, WireSpelling.signInBatchPath, body: #"{"users":[{"emailAddress":"dan@example.com"}]}"#)
            #expect(anonymous.status == 401)
        }
    }
}

extension Result {
    fileprivate var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
