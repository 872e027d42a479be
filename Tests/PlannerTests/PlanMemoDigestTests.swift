import Crypto
import Foundation
import Recipe
import ShareKit
import Testing

@testable import PlanModel
@testable import Planner

/// A zone's digest in the plan cache: the same for the same declaration and context in every process, and
/// different when anything its plan depends on differs.
@Suite("Plan cache digests")
struct PlanMemoDigestTests {
    static let location = SourceLocation(file: "recipe.yaml", line: 1, column: 1)

    static func zone(_ records: [DeclaredRecord], share: ShareDeclaration? = nil) -> DeclaredZone {
        DeclaredZone(name: "Lists", share: share, records: records, location: location)
    }

    /// The declaration's digest (`PlanMemo.contents(of:)`).
    static func content(_ zone: DeclaredZone) -> String { PlanMemo.contents(of: zone).content }

    static let milk = DeclaredRecord(
        name: "milk", type: "Item", fields: ["title": .value(.string("Milk")), "qty": .value(.int64(3))],
        location: location)

    @Test("a digest is SHA-256 of the context and the content, in lowercase hexadecimal")
    func digestIsSHA256Hex() {
        let expected = SHA256.hash(data: Data("context\u{0}content".utf8)).map { String(format: "%02x", $0) }
            .joined()
        #expect(PlanMemo.digest(context: "context", content: "content") == expected)
        #expect(expected.count == 64)
    }

    @Test("the content digest is the same for the same declaration, and differs for any change a plan sees")
    func contentDigestFollowsTheDeclaration() {
        let base = Self.content(Self.zone([Self.milk]))
        #expect(Self.content(Self.zone([Self.milk])) == base)
        var absent = Self.milk
        absent.absent = true
        var shared = Self.milk
        shared.share = .share(DeclaredShare(title: "T", location: Self.location))
        var retyped = Self.milk
        retyped.type = "Thing"
        var moreMilk = Self.milk
        moreMilk.fields["qty"] = .value(.int64(4))
        var parented = Self.milk
        parented.parent = "list"
        let variants = [
            Self.content(Self.zone([absent])), Self.content(Self.zone([shared])),
            Self.content(Self.zone([retyped])), Self.content(Self.zone([moreMilk])),
            Self.content(Self.zone([parented])),
            Self.content(Self.zone([Self.milk], share: .share(DeclaredShare(location: Self.location)))),
            Self.content(Self.zone([])),
        ]
        #expect(Set(variants + [base]).count == variants.count + 1, "\(variants)")
    }

    @Test("a share written elsewhere in the file changes the content digest, and not the one without places")
    func placesAreApart() {
        let lower = SourceLocation(file: "recipe.yaml", line: 9, column: 3)
        let bob = DeclaredParticipant(handle: "bob", permission: .readOnly, location: Self.location)
        let here = Self.zone([Self.milk], share: .share(DeclaredShare(participants: [bob], location: Self.location)))
        var movedBob = bob
        movedBob.location = lower
        let moved = Self.zone([Self.milk], share: .share(DeclaredShare(participants: [movedBob], location: lower)))
        var writer = bob
        writer.permission = .readWrite
        let changed = Self.zone([Self.milk], share: .share(DeclaredShare(participants: [writer], location: lower)))
        #expect(PlanMemo.contents(of: moved).content != PlanMemo.contents(of: here).content)
        #expect(PlanMemo.contents(of: moved).placeless == PlanMemo.contents(of: here).placeless)
        #expect(PlanMemo.contents(of: changed).placeless != PlanMemo.contents(of: here).placeless)
        let digests = PlanMemo.digests(of: moved, context: "context")
        #expect(digests.placeless == PlanMemo.digests(of: here, context: "context").placeless)
        #expect(digests.placeless != PlanMemo.digests(of: here, context: "other").placeless)
    }

    @Test("the content digest differs for any change to a share declaration, the zone's or a record's")
    func contentDigestFollowsShares() {
        let bob = DeclaredParticipant(handle: "bob", permission: .readOnly, location: Self.location)
        let share = DeclaredShare(title: "Trip", participants: [bob], location: Self.location)
        func with(_ change: (inout DeclaredShare) -> Void) -> ShareDeclaration {
            var changed = share
            change(&changed)
            return .share(changed)
        }
        func participant(_ change: (inout DeclaredParticipant) -> Void) -> ShareDeclaration {
            with {
                change(&$0.participants[0])
            }
        }
        let declarations: [ShareDeclaration?] = [
            nil, ShareDeclaration.none, .share(share),
            with { $0.title = nil }, with { $0.title = "" }, with { $0.publicPermission = .readOnly },
            with { $0.stableURL = true }, with { $0.participants = [] }, with { $0.participants = [bob, bob] },
            with { $0.location = SourceLocation(file: "recipe.yaml", line: 2, column: 1) },
            participant { $0.handle = "carol" }, participant { $0.permission = .readWrite },
            participant { $0.role = .administrator }, participant { $0.accepted = false },
            participant { $0.location = SourceLocation(file: "other.yaml", line: 1, column: 1) },
        ]
        let zones = declarations.map { Self.content(Self.zone([Self.milk], share: $0)) }
        #expect(Set(zones).count == declarations.count)
        let records = declarations.map { declaration in
            var record = Self.milk
            record.share = declaration
            return Self.content(Self.zone([record]))
        }
        #expect(Set(records).count == declarations.count)
        #expect(Set(zones).isDisjoint(with: records.dropFirst()), "a zone's share is not a record's")
        #expect(Self.content(Self.zone([Self.milk], share: .share(share))) == zones[2], "the same each time")
    }

    @Test("the context names the users' record names: a user signed in since makes every zone's digest new")
    func contextFollowsTheUsers() throws {
        let recipe = Recipe(name: "r", file: "r.yaml", users: [], owner: "alice")
        func users(_ bob: UserRecordName?) -> UserDirectory {
            UserDirectory(
                entries: [
                    .init(handle: "alice", email: "alice@example.com", name: nil, recordName: "_a"),
                    .init(handle: "bob", email: "bob@example.com", name: nil, recordName: bob),
                ], ownerHandle: "alice")
        }
        func key(_ bob: UserRecordName?, prune: Bool = false) -> String {
            PlanMemo.Context(recipe: recipe, users: users(bob), prune: prune, destroy: false, actsAsAnyUser: true).key
        }
        #expect(key(nil) == key(nil))
        #expect(Set([key(nil), key("_b"), key("_c"), key(nil, prune: true)]).count == 4)
    }
}
