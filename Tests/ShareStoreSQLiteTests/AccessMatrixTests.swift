import Foundation
import ShareKit
import ShareStoreSQLite
import Testing

/// Who may do what, through the `Store` protocol on a real SQLite file: every role against every operation,
/// each in a fresh store, each asserting the exact outcome and that a refused operation changed nothing.
@Suite struct AccessMatrixTests {
    enum Role: String, CaseIterable {
        case owner, administrator
        case readWrite = "read-write participant"
        case readOnly = "read-only participant"
        case pending = "pending participant"
        case removed = "removed participant"
        case stranger
        case publicUser = "public user"
    }

    enum Operation: String, CaseIterable {
        case seeZone = "see the zone in the shared database"
        case read = "read a record"
        case createInZoneShare = "create a record in a zone share"
        case createChild = "create a child in a hierarchy share"
        case createOutside = "create a record outside the hierarchy"
        case update = "update a record"
        case delete = "delete a record"
        case deleteRoot = "delete the hierarchy root"
        case changeParticipants = "add or remove a participant"
        case changePermission = "change a participant's permission"
        case changePublicPermission = "change the public permission"
        case leave = "leave the share"
    }

    static let ok = "allowed"
    static let ad = ServerErrorCode.accessDenied.rawValue
    /// A request about a zone not in the caller's shared database answers as a missing zone does.
    static let nz = ServerErrorCode.zoneNotFound.rawValue

    /// The expected outcome of each cell: `allowed`, `listed`/`not listed`, or an error code.
    static let expected: [Operation: [Role: String]] = {
        func row(_ values: [String]) -> [Role: String] {
            Dictionary(uniqueKeysWithValues: zip(Role.allCases, values))
        }
        return [
            .seeZone: row([
                "not listed", "listed", "listed", "listed", "not listed", "not listed", "not listed", "listed",
            ]),
            // Whoever has not the zone in its shared database (pending, removed, stranger) is answered, for
            // every operation, as for a zone that does not exist; only leaving asks no more than an invitation.
            .read: row([ok, ok, ok, ok, nz, nz, nz, ok]),
            .createInZoneShare: row([ok, ok, ok, ad, nz, nz, nz, ok]),
            .createChild: row([ok, ok, ok, ad, nz, nz, nz, ok]),
            .createOutside: row([ok, ad, ad, ad, nz, nz, nz, ad]),
            .update: row([ok, ok, ok, ad, nz, nz, nz, ok]),
            .delete: row([ok, ok, ok, ad, nz, nz, nz, ok]),
            .deleteRoot: row([ok, ad, ad, ad, nz, nz, nz, ad]),
            .changeParticipants: row([ok, ok, ad, ad, nz, nz, nz, ad]),
            .changePermission: row([ok, ok, ad, ad, nz, nz, nz, ad]),
            .changePublicPermission: row([ok, ok, ad, ad, nz, nz, nz, ad]),
            .leave: row(["BAD_REQUEST", ok, ok, ok, ok, "NOT_FOUND", nz, ok]),
        ]
    }()

    /// The people of the fixture and the zones Alice shares.
    struct Fixture {
        let temp: TemporaryStore
        var store: SQLiteStore { temp.store }
        var users: [Role: User] = [:]
        let dana: User
        var owner: UserRecordName { name(.owner) }

        /// The record name of the user who plays `role` (every role is signed in by `init`).
        func name(_ role: Role) -> UserRecordName {
            guard let user = users[role] else {
                preconditionFailure("the fixture signs in every role; \(role) is missing")
            }
            return user.recordName
        }
        let lists = ZoneID(zoneName: "Lists")
        let trips = ZoneID(zoneName: "Trips")
        var tripsShareName = ""

        /// Alice shares the zone Lists (groceries, milk) and the hierarchy italy (hotel) of the zone Trips,
        /// which also holds notes, outside the hierarchy. With `publicShares`, both shares are public
        /// (read-write) and the public user joined through their URLs; otherwise they have an administrator,
        /// a read-write, a read-only, a pending and a removed participant.
        init(publicShares: Bool) async throws {
            temp = try TemporaryStore()
            let store = temp.store
            let emails: [Role: String] = [
                .owner: "alice@example.com", .administrator: "adam@example.com", .readWrite: "rita@example.com",
                .readOnly: "otto@example.com", .pending: "pete@example.com", .removed: "remy@example.com",
                .stranger: "stan@example.com", .publicUser: "paula@example.com",
            ]
            for (role, email) in emails { users[role] = try await store.signIn(email: email, name: nil) }
            dana = try await store.signIn(email: "dana@example.com", name: "Dana")
            let alice = name(.owner)
            _ = try await store.modifyZones([.init(.create, lists), .init(.create, trips)], in: .private, as: alice)
            var participants: [Participant] = []
            if !publicShares {
                participants = [
                    Participant(
                        userRecordName: name(.administrator), role: .administrator, permission: .readWrite),
                    Participant(userRecordName: name(.readWrite), permission: .readWrite),
                    Participant(userRecordName: name(.readOnly), permission: .readOnly),
                    Participant(userRecordName: name(.pending), permission: .readWrite),
                    Participant(userRecordName: name(.removed), permission: .readWrite),
                ]
            }
            let publicPermission: Permission = publicShares ? .readWrite : .none
            var zoneShare = Share.zoneWide(lists, title: "Lists", publicPermission: publicPermission)
            zoneShare.participants = participants
            let listOutcomes = try await store.modifyRecords(
                [
                    RecordOperation(.create, Record(recordName: "groceries", recordType: "TodoList", zoneID: lists)),
                    RecordOperation(.create, todo("milk", in: lists, title: "Milk", parent: "groceries")),
                    RecordOperation(.create, share: zoneShare),
                ], in: lists, database: .private, atomic: true, as: alice)
            let hierarchy = Share(
                recordName: "", zoneID: trips, rootRecordName: "italy", title: "Italy",
                publicPermission: publicPermission, participants: participants)
            let tripOutcomes = try await store.modifyRecords(
                [
                    RecordOperation(.create, Record(recordName: "italy", recordType: "Group", zoneID: trips)),
                    RecordOperation(.create, todo("hotel", in: trips, title: "Hotel", parent: "italy")),
                    RecordOperation(.create, todo("notes", in: trips, title: "Notes")),
                    RecordOperation(.create, share: hierarchy),
                ], in: trips, database: .private, atomic: true, as: alice)
            guard let listShare = listOutcomes[2].share, let tripShare = tripOutcomes[3].share,
                let listURL = listShare.url, let tripURL = tripShare.url
            else {
                throw FixtureError("the fixture's shares were not saved: \(listOutcomes) \(tripOutcomes)")
            }
            tripsShareName = tripShare.recordName
            let accepting: [Role] = publicShares ? [.publicUser] : [.administrator, .readWrite, .readOnly, .removed]
            for role in accepting {
                _ = try await store.acceptShare(url: listURL, as: name(role))
                _ = try await store.acceptShare(url: tripURL, as: name(role))
            }
            if !publicShares {
                let remy = name(.removed)
                try await store.leaveShare(
                    recordName: zoneShareRecordName, in: ZoneID(zoneName: "Lists", ownerRecordName: alice), as: remy)
                try await store.leaveShare(
                    recordName: tripShare.recordName, in: ZoneID(zoneName: "Trips", ownerRecordName: alice), as: remy)
            }
        }

        /// The zone as `role` names it, and the database it uses.
        func place(_ zone: ZoneID, for role: Role) -> (ZoneID, DatabaseScope) {
            role == .owner ? (zone, .private) : (ZoneID(zoneName: zone.zoneName, ownerRecordName: owner), .shared)
        }

        func snapshot() async throws -> [ZoneSnapshot] {
            [try await store.snapshot(lists, owner: owner), try await store.snapshot(trips, owner: owner)]
        }
    }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    /// Runs one cell; answers `allowed`, `listed`/`not listed`, or the error code.
    static func run(_ op: Operation, as role: Role, in f: Fixture) async throws -> String {
        let store = f.store
        let caller = f.name(role)
        let (lists, db) = f.place(f.lists, for: role)
        let (trips, _) = f.place(f.trips, for: role)
        func outcome(_ o: RecordOutcome) -> String { o.code?.rawValue ?? ok }
        func modify(_ ops: [RecordOperation], in zone: ZoneID) async throws -> String {
            outcome(try await store.modifyRecords(ops, in: zone, database: db, atomic: true, as: caller)[0])
        }
        func ownersShare(_ name: String, in zone: ZoneID) async throws -> Share {
            guard let share = try await store.share(name, in: zone, as: f.owner) else {
                throw FixtureError("no share \(name)")
            }
            return share
        }
        switch op {
        case .seeZone:
            let zones = try await store.listZones(in: .shared, as: caller)
            return zones.contains { $0.zoneID.zoneName == "Lists" } ? "listed" : "not listed"
        case .read:
            return outcome(try await store.lookupRecords(["milk"], in: lists, database: db, as: caller)[0])
        case .createInZoneShare:
            return try await modify([RecordOperation(.create, todo("eggs", in: lists, title: "Eggs"))], in: lists)
        case .createChild:
            return try await modify(
                [RecordOperation(.create, todo("museum", in: trips, title: "Museum", parent: "italy"))], in: trips)
        case .createOutside:
            return try await modify([RecordOperation(.create, todo("paris", in: trips, title: "Paris"))], in: trips)
        case .update:
            guard var milk = try await store.record("milk", in: f.lists, as: f.owner) else {
                throw FixtureError("no milk")
            }
            milk.zoneID = lists
            milk.fields["title"] = .string("Oat milk")
            return try await modify([RecordOperation(.update, milk)], in: lists)
        case .delete:
            guard let milk = try await store.record("milk", in: f.lists, as: f.owner) else {
                throw FixtureError("no milk")
            }
            return try await modify(
                [
                    RecordOperation(
                        .delete,
                        Record(recordName: "milk", recordType: "Todo", zoneID: lists, changeTag: milk.changeTag))
                ],
                in: lists)
        case .deleteRoot:
            guard let italy = try await store.record("italy", in: f.trips, as: f.owner) else {
                throw FixtureError("no italy")
            }
            return try await modify(
                [
                    RecordOperation(
                        .delete,
                        Record(recordName: "italy", recordType: "Group", zoneID: trips, changeTag: italy.changeTag))
                ],
                in: trips)
        case .changeParticipants:
            var share = try await ownersShare(zoneShareRecordName, in: f.lists)
            share.zoneID = lists
            share.participants.append(Participant(userRecordName: f.dana.recordName, permission: .readOnly))
            return try await modify([RecordOperation(.update, share: share)], in: lists)
        case .changePermission:
            var share = try await ownersShare(zoneShareRecordName, in: f.lists)
            share.zoneID = lists
            guard !share.participants.isEmpty else { throw FixtureError("no participants") }
            let index = share.participants.firstIndex { $0.userRecordName == f.name(.readOnly) } ?? 0
            share.participants[index].permission =
                share.participants[index].permission == .readOnly ? .readWrite : .readOnly
            return try await modify([RecordOperation(.update, share: share)], in: lists)
        case .changePublicPermission:
            var share = try await ownersShare(zoneShareRecordName, in: f.lists)
            share.zoneID = lists
            if share.publicPermission == .none {
                // A share with a public permission has no private participants: going public drops them.
                share.publicPermission = .readOnly
                share.participants = []
            } else {
                share.publicPermission = .readOnly
            }
            return try await modify([RecordOperation(.update, share: share)], in: lists)
        case .leave:
            do {
                try await store.leaveShare(
                    recordName: zoneShareRecordName, in: ZoneID(zoneName: "Lists", ownerRecordName: f.owner), as: caller
                )
                return ok
            } catch let error as ShareError {
                return error.code.rawValue
            }
        }
    }

    /// Runs every cell in a fresh store; checks that refusals changed nothing and allowed writes changed something.
    static func runMatrix() async throws -> [Operation: [Role: String]] {
        var results: [Operation: [Role: String]] = [:]
        for role in Role.allCases {
            for op in Operation.allCases {
                let fixture = try await Fixture(publicShares: role == .publicUser)
                let before = try await fixture.snapshot()
                let result = try await run(op, as: role, in: fixture)
                let after = try await fixture.snapshot()
                let readsOnly = op == .seeZone || op == .read
                if result == ok && !readsOnly {
                    #expect(before != after, "\(role.rawValue) may \(op.rawValue), yet nothing changed")
                } else {
                    #expect(
                        before == after, "\(role.rawValue) × \(op.rawValue) answered \(result) but changed the store")
                }
                results[op, default: [:]][role] = result
            }
        }
        return results
    }

    static func markdown(_ results: [Operation: [Role: String]]) -> String {
        var lines = ["| operation | " + Role.allCases.map(\.rawValue).joined(separator: " | ") + " |"]
        lines.append("|---|" + Role.allCases.map { _ in "---" }.joined(separator: "|") + "|")
        for op in Operation.allCases {
            let cells = Role.allCases.map { role -> String in
                let value = results[op]?[role] ?? "?"
                return value == ok
                    ? "✅ allowed"
                    : (value == "listed" ? "✅ listed" : (value == "not listed" ? "— not listed" : "❌ `\(value)`"))
            }
            lines.append("| \(op.rawValue) | " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    @Test func everyRoleAgainstEveryOperation() async throws {
        let results = try await Self.runMatrix()
        for op in Operation.allCases {
            for role in Role.allCases {
                #expect(
                    results[op]?[role] == Self.expected[op]?[role],
                    "\(role.rawValue) × \(op.rawValue): expected \(Self.expected[op]?[role] ?? "?"), got \(results[op]?[role] ?? "?")"
                )
            }
        }
        // Docs/Sharing.md holds this table; RECORD_DOCS=1 rewrites it from the results.
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Docs/Sharing.md")
        let table = Self.markdown(results) + "\n"
        let begin = "<!-- access-matrix:begin -->\n"
        let end = "<!-- access-matrix:end -->"
        let text = try String(contentsOf: docs, encoding: .utf8)
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex)
        else {
            Issue.record("Docs/Sharing.md lacks the access-matrix markers")
            return
        }
        let current = String(text[start.upperBound..<stop.lowerBound])
        if ProcessInfo.processInfo.environment["RECORD_DOCS"] == "1" {
            try (String(text[..<start.upperBound]) + table + String(text[stop.lowerBound...]))
                .write(to: docs, atomically: true, encoding: .utf8)
        } else {
            #expect(
                current == table, "Docs/Sharing.md's access matrix is out of date; run the tests with RECORD_DOCS=1")
        }
    }
}
