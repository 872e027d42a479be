import Foundation
import Recipe
import ShareKit
import Testing

@testable import Planner

/// The cache file keeps a remembered recipe's users in columns (`PackedUsers`); the next plan reads back the
/// same users, with the same record names, or plans from a recipe that is not the one it planned.
@Suite("The plan cache's users")
struct PackedUsersTests {
    static func remembered(_ declared: [DeclaredUser], _ directory: UserDirectory) -> RememberedRecipe {
        RememberedRecipe(
            recipe: Recipe(name: "r", file: "r.yaml", users: declared, owner: "alice"), inputs: RecipeInputs(),
            users: directory, options: "o", digests: ["Z": "d"])
    }

    static func roundTrip(_ remembered: RememberedRecipe) throws -> RememberedRecipe {
        try JSONDecoder().decode(RememberedRecipe.self, from: JSONEncoder().encode(remembered))
    }

    @Test("every user comes back as declared, with the directory's record names, missing ones included")
    func sameUsers() throws {
        let declared = [
            DeclaredUser(
                handle: "alice", email: "alice@example.com", name: "Alice",
                location: .init(file: "r.yaml", line: 3, column: 3),
                phone: "+15551234567", discoverable: true),
            DeclaredUser(
                handle: "bob", email: "bob@example.com", location: .init(file: "users.yaml", line: 10, column: 5),
                discoverable: false),
            DeclaredUser(
                handle: "carol", email: "carol@example.com", name: "",
                location: .init(file: "r.yaml", line: 4, column: 3)),
        ]
        let directory = UserDirectory(
            entries: [
                .init(handle: "alice", email: "alice@example.com", name: "Alice", recordName: "_a"),
                .init(handle: "bob", email: "bob@example.com", name: nil, recordName: nil),
                .init(handle: "carol", email: "carol@example.com", name: "", recordName: "_c"),
            ], ownerHandle: "alice")
        let back = try Self.roundTrip(Self.remembered(declared, directory))
        #expect(back.header.users == declared)
        #expect(back.users == directory)
        #expect(back.users.owner.recordName == "_a")
        #expect(back.users.handle(of: "_c") == "carol")
        #expect(back.digests == ["Z": "d"])
    }

    @Test("names with line breaks, and a directory that is not the recipe's users, come back as they were")
    func oddCases() throws {
        let declared = [
            DeclaredUser(
                handle: "alice", email: "alice@example.com", name: "Alice\nSecond line",
                location: .init(file: "r.yaml", line: 3, column: 3))
        ]
        let directory = UserDirectory(
            entries: [
                .init(handle: "alice", email: "alice@example.com", name: "Someone else", recordName: "_a"),
                .init(handle: "dana", email: "dana@example.com", name: nil, recordName: "_d"),
            ], ownerHandle: "alice")
        let back = try Self.roundTrip(Self.remembered(declared, directory))
        #expect(back.header.users == declared)
        #expect(back.users == directory)
        let none = try Self.roundTrip(Self.remembered([], UserDirectory(entries: [], ownerHandle: "alice")))
        #expect(none.header.users.isEmpty && none.users.entries.isEmpty)
    }
}
