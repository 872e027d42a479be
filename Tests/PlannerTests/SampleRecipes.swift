import Foundation
import Logging
import Recipe
import ShareKit
import ShareStoreSQLite

/// Recipes built by hand, as the loader would build them from YAML.
enum SampleRecipes {
    static func at(_ line: Int) -> SourceLocation { SourceLocation(file: "family.yaml", line: line, column: 1) }

    static let users = [
        DeclaredUser(handle: "alice", email: "alice@example.com", name: "Alice Appleseed", location: at(1)),
        DeclaredUser(handle: "bob", email: "bob@example.com", name: "Bob Builder", location: at(2)),
        DeclaredUser(handle: "carol", email: "carol@example.com", location: at(3)),
        DeclaredUser(handle: "dana", email: "dana@example.com", location: at(4)),
    ]

    /// the family-lists recipe of Recipes/sharelane.yaml: a zone-wide share with participants, a pruned zone with a hierarchy
    /// share, generated records, a public record holding a share URL.
    static func family(days: Int = 3) -> Recipe {
        let groceries = DeclaredRecord(
            name: "groceries", type: "TodoList",
            fields: [
                "title": .value(.string("Groceries")),
                "created": .value(.timestamp(1_714_554_000_000)),
            ], location: at(10))
        let milk = DeclaredRecord(
            name: "milk", type: "Todo",
            fields: ["title": .value(.string("Milk")), "done": .value(.int64(0)), "qty": .value(.int64(2))],
            parent: "groceries", location: at(11))
        let familyLists = DeclaredZone(
            name: "FamilyLists",
            share: .share(
                DeclaredShare(
                    title: "Family lists", publicPermission: .none,
                    participants: [
                        DeclaredParticipant(handle: "bob", permission: .readWrite, accepted: false, location: at(6)),
                        DeclaredParticipant(handle: "dana", permission: .readOnly, location: at(7)),
                    ], location: at(5))),
            records: [groceries, milk], location: at(5))
        let italy = DeclaredRecord(
            name: "italy", type: "Group",
            fields: [
                "name": .value(.string("Italy 2025")),
                "members": .value(.list(elementType: .string, [.string("alice"), .string("bob")])),
            ],
            share: .share(DeclaredShare(publicPermission: .readOnly, location: at(16))), location: at(14))
        let hotel = DeclaredRecord(
            name: "hotel", type: "Cost",
            fields: [
                "amount": .value(.double(420.5)), "currency": .value(.string("EUR")),
                "trip": .value(.reference(Reference(recordName: "italy"))),
            ], parent: "italy", location: at(18))
        let dayRecords = (1...max(days, 1)).prefix(days).map { i in
            DeclaredRecord(
                name: "day-\(i)", type: "Day", fields: ["title": .value(.string("Day \(i)"))], parent: "italy",
                location: at(20))
        }
        let trips = DeclaredZone(name: "Trips", records: [italy, hotel] + dayRecords, prune: true, location: at(13))
        let card = DeclaredRecord(
            name: "alice-card", type: "MyUser",
            fields: [
                "firstName": .value(.string("Alice")),
                "privateShareURL": .shareURL(zone: "FamilyLists", record: nil),
            ], location: at(30))
        return Recipe(
            name: "family-lists", file: "family.yaml", users: users, owner: "alice", zones: [familyLists, trips],
            publicRecords: [card])
    }

    /// One zone of `count` generated records, ten children under each of `count / 10` parents.
    static func generated(count: Int) -> Recipe {
        var records: [DeclaredRecord] = []
        let parents = max(count / 10, 1)
        for p in 0..<parents {
            records.append(
                DeclaredRecord(
                    name: String(format: "list-%05d", p), type: "TodoList",
                    fields: ["title": .value(.string("List \(p)")), "n": .value(.int64(Int64(p)))], location: at(1)))
        }
        var i = 0
        while records.count < count {
            records.append(
                DeclaredRecord(
                    name: String(format: "item-%05d", i), type: "Todo",
                    fields: ["title": .value(.string("Item \(i)")), "qty": .value(.int64(Int64(i % 7)))],
                    parent: String(format: "list-%05d", i % parents), location: at(2)))
            i += 1
        }
        let zone = DeclaredZone(name: "Big", records: records, location: at(1))
        return Recipe(name: "generated", file: "big.yaml", users: Array(users.prefix(1)), owner: "alice", zones: [zone])
    }
}

/// A logger that drops everything, for tests.
let quietLogger: Logger = {
    var logger = Logger(label: "sharelane.tests") { _ in SwiftLogNoOpLogHandler() }
    logger.logLevel = .critical
    return logger
}()

/// A fresh in-memory SQLite store.
func freshStore() throws -> SQLiteStore { try SQLiteStore.inMemory(logger: quietLogger) }
