import Applier
import CloudKitWire
import Foundation
import Planner
import Recipe
import ShareKit
import SharelaneTestSupport
import Testing

/// `users/*` over a real `sharelane serve`, raw HTTP and through the client: discoverability is each user's
/// choice, and one who is not discoverable answers like one who does not exist.
@Suite(.serialized) struct UserDiscoveryTests {
    typealias H = EmulatorHarness

    /// Signs in over raw HTTP and sets the user's phone number and discoverability with `users/settings`.
    static func user(_ base: String, _ email: String, phone: String?, discoverable: Bool) async throws -> (
        token: String, user: String
    ) {
        let (token, user) = try await H.signIn(base, email)
        let phoneJSON = phone.map { "\"\($0)\"" } ?? "null"
        let answer = try await H.raw(
            base, H.databasePath("public", "users/settings"),
            query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
            body: #"{"phoneNumber":\#(phoneJSON),"discoverable":\#(discoverable)}"#)
        #expect(answer.status == 200, "\(answer.text)")
        return (try #require(answer.nextToken), user)
    }

    @Test("users/discover answers discoverable users in full and everyone else with the lookup only")
    func discover() async throws {
        try await H.withEmulator { base in
            let (_, alice) = try await Self.user(
                base, "alice@example.com", phone: "+1 (555) 010-0001", discoverable: true)
            let (_, bob) = try await Self.user(base, "bob@example.com", phone: "+15550100002", discoverable: false)
            let (token, carol) = try await H.signIn(base, "carol@example.com")
            let body = """
                {"lookupInfos":[{"emailAddress":"alice@example.com"},{"phoneNumber":"+15550100001"},\
                {"userRecordName":"\(alice)"},{"emailAddress":"bob@example.com"},{"phoneNumber":"+15550100002"},\
                {"userRecordName":"\(bob)"},{"emailAddress":"nobody@example.com"},{"userRecordName":"\(carol)"}]}
                """
            let answer = try await H.raw(
                base, H.databasePath("public", "users/discover"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: body)
            #expect(answer.status == 200, "\(answer.text)")
            let users = try #require(answer.json["users"] as? [[String: Any]])
            #expect(users.count == 8)
            // Alice, by each of her lookups: her record name, the lookup, her name components.
            for index in 0..<3 {
                #expect(users[index]["userRecordName"] as? String == alice, "\(users[index])")
                #expect(users[index]["lookupInfo"] != nil)
            }
            #expect((users[1]["lookupInfo"] as? [String: Any])?["phoneNumber"] as? String == "+15550100001")
            // Bob (not discoverable) and nobody: the lookup only, alike.
            for index in 3..<7 {
                #expect(users[index]["userRecordName"] == nil, "\(users[index])")
                #expect(users[index]["nameComponents"] == nil)
                #expect(users[index]["lookupInfo"] != nil)
            }
            // Carol, not discoverable, sees herself.
            #expect(users[7]["userRecordName"] as? String == carol)

            // GET users/discover answers 500 as the live service does; users/* in the private database 400.
            let next = try #require(answer.nextToken)
            var other = try await H.raw(
                base, H.databasePath("public", "users/discover"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": next], method: "GET")
            #expect(other.status == 500)
            other = try await H.raw(
                base, H.databasePath("private", "users/discover"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": next], body: body)
            #expect(other.status == 400)
            #expect(other.json["serverErrorCode"] as? String == "BAD_REQUEST")
        }
    }

    @Test("users/caller, users/lookup/phone and users/lookup/id")
    func callerAndLookups() async throws {
        try await H.withEmulator { base in
            let (_, alice) = try await Self.user(base, "alice@example.com", phone: "+15550100001", discoverable: true)
            let (_, bob) = try await Self.user(base, "bob@example.com", phone: "+15550100002", discoverable: false)
            var (token, carol) = try await H.signIn(base, "carol@example.com")
            func send(_ path: String, _ body: String?) async throws -> H.Answer {
                let answer = try await H.raw(
                    base, H.databasePath("public", path), query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                    body: body, method: body == nil ? "GET" : "POST")
                if let next = answer.nextToken { token = next }
                return answer
            }
            var answer = try await send("users/caller", nil)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.json["userRecordName"] as? String == carol)
            #expect((answer.json["lookupInfo"] as? [String: Any])?["emailAddress"] as? String == "carol@example.com")

            answer = try await send(
                "users/lookup/phone", #"{"users":[{"phoneNumber":"+1 555 010 0001"},{"phoneNumber":"+15550100002"}]}"#)
            #expect(answer.status == 200, "\(answer.text)")
            var users = try #require(answer.json["users"] as? [[String: Any]])
            #expect(users[0]["userRecordName"] as? String == alice)
            #expect(users[1]["userRecordName"] == nil)
            #expect(users[1]["serverErrorCode"] as? String == "NOT_FOUND")

            answer = try await send(
                "users/lookup/id", #"{"users":[{"userRecordName":"\#(alice)"},{"userRecordName":"\#(bob)"}]}"#)
            #expect(answer.status == 200, "\(answer.text)")
            users = try #require(answer.json["users"] as? [[String: Any]])
            #expect(users[0]["userRecordName"] as? String == alice)
            #expect(users[1]["serverErrorCode"] as? String == "NOT_FOUND")

            // The wrong kind of lookup, and a bad phone number, are BAD_REQUEST and change nothing.
            answer = try await send("users/lookup/phone", #"{"users":[{"emailAddress":"alice@example.com"}]}"#)
            #expect(answer.status == 400)
            answer = try await send("users/settings", #"{"phoneNumber":"555-0100","discoverable":true}"#)
            #expect(answer.status == 400, "\(answer.text)")
            #expect((answer.json["reason"] as? String)?.contains("international form") == true)
            // Another user's number is a CONFLICT.
            answer = try await send("users/settings", #"{"phoneNumber":"+15550100001","discoverable":true}"#)
            #expect(answer.status == 409, "\(answer.text)")
            // Without a user: users/* need one.
            answer = try await H.raw(
                base, H.databasePath("public", "users/caller"), query: ["ckAPIToken": H.apiToken], method: "GET")
            #expect(answer.status == 421)
        }
    }

    @Test("the http: client discovers users and sets discoverability")
    func throughTheClient() async throws {
        try await H.withEmulator { base in
            let store = H.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: "Alice Appleseed").recordName
            let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
            var found = try await store.discoverUsers([.email("alice@example.com")], as: bob)
            #expect(found == [UserIdentity(lookup: .email("alice@example.com"))])
            try await store.setDiscoverability(
                UserDiscoverability(phone: "+44 20 7946 0000", discoverable: true), as: alice)
            found = try await store.discoverUsers([.email("alice@example.com"), .phone("+442079460000")], as: bob)
            #expect(found.map(\.userRecordName) == [alice, alice])
            #expect(found[0].name == "Alice Appleseed")
            await #expect(throws: ShareError.self) {
                try await store.setDiscoverability(UserDiscoverability(phone: "12", discoverable: true), as: bob)
            }
        }
    }

    @Test("a recipe's phone: and discoverable: reach the store through apply over http:")
    func recipeUsers() async throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: """
                sharelane: 1
                name: discovery
                users:
                  alice: { email: alice@example.com, phone: "+1 555 010 0001", discoverable: true }
                  bob: { email: bob@example.com }
                owner: alice
                zones:
                  Lists: {}
                """, file: "discovery.yaml")
        #expect(recipe.user("alice")?.phone == "+15550100001")
        #expect(recipe.user("alice")?.discoverable == true)
        #expect(recipe.user("bob")?.discoverable == nil)
        try await H.withEmulator { base in
            let store = H.store(base, for: recipe)
            let planner = Planner(store: store, logger: H.quiet)
            let report = try await Applier(store: store, logger: H.quiet).apply(try await planner.plan(recipe))
            #expect(report.failures == [])
            let carol = try await store.signIn(email: "carol@example.com", name: nil).recordName
            let found = try await store.discoverUsers(
                [.phone("+15550100001"), .email("alice@example.com"), .email("bob@example.com")], as: carol)
            #expect(found[0].isFound)
            #expect(found[1].isFound)
            #expect(!found[2].isFound, "bob did not say discoverable: true")
            #expect(try await planner.plan(recipe).changes == [])
            // The export says them again, and plans to no changes.
            let owner = try await store.signIn(email: "alice@example.com", name: nil)
            let yaml = try await Exporter(store: store, logger: H.quiet).export(
                owner: owner, name: "discovery", container: recipe.container,
                environment: recipe.environment.rawValue)
            #expect(yaml.contains("+15550100001"), "\(yaml)")
            #expect(yaml.contains("discoverable: true"), "\(yaml)")
            let exported = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "exported.yaml")
            #expect(exported.user(exported.owner)?.phone == "+15550100001")
            #expect(try await planner.plan(exported).changes == [])
        }
    }

    @Test("participants are invited by email address, phone number or user record name")
    func participantsByEveryLookup() async throws {
        try await H.withEmulator { base in
            let store = H.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
            let carol = try await store.signIn(email: "carol@example.com", name: nil).recordName
            // Bob is not discoverable: an invitation by phone number still finds him, as CloudKit's does.
            try await store.setDiscoverability(UserDiscoverability(phone: "+15550100002"), as: bob)
            let lists = ZoneID(zoneName: "Lists")
            _ = try await store.modifyZones([ZoneOperation(.create, lists)], in: .private, as: alice)
            var share = Share.zoneWide(lists, title: "Lists")
            share.participants = [
                Participant(userRecordName: "", phone: "+1 555 010 0002"),
                Participant(userRecordName: carol),
                Participant(userRecordName: "", email: "dana@example.com"),
            ]
            let saved = try await store.modifyRecords(
                [.init(.create, share: share)], in: lists, database: .private, atomic: true, as: alice)
            let participants = try #require(saved[0].savedShare?.participants)
            #expect(participants.map(\.userRecordName).contains(bob), "\(participants)")
            #expect(participants.map(\.userRecordName).contains(carol))
            #expect(participants.compactMap(\.email).contains("dana@example.com"))
            // A phone number nobody has is NOT_FOUND, and nothing is saved.
            var unknown = Share.zoneWide(ZoneID(zoneName: "Other"), title: "Other")
            _ = try await store.modifyZones(
                [ZoneOperation(.create, ZoneID(zoneName: "Other"))], in: .private, as: alice)
            unknown.participants = [Participant(userRecordName: "", phone: "+15550109999")]
            let refused = try await store.modifyRecords(
                [.init(.create, share: unknown)], in: ZoneID(zoneName: "Other"), database: .private, atomic: true,
                as: alice)
            #expect(refused[0].error?.code == .notFound, "\(refused)")
        }
    }
}
