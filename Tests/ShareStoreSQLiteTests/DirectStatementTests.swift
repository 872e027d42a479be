import Foundation
import GRDB
import Testing

@testable import ShareStoreSQLite

/// The store's direct statements bind exactly the values they are given: a refused bind or a missing value
/// throws instead of running, and a value from a previous run of the cached statement is never reused.
@Suite("Direct statements")
struct DirectStatementTests {
    static func table() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (a INTEGER, b TEXT)") }
        return queue
    }

    static func rows(_ queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT a, b FROM t ORDER BY rowid").map {
                "\($0["a"] ?? "nil") \($0["b"] ?? "nil")"
            }
        }
    }

    @Test("a run with fewer values than parameters throws, and never takes the previous run's value")
    func missingValueThrows() throws {
        let queue = try Self.table()
        try queue.write { db in
            try DirectStatement.run("INSERT INTO t (a, b) VALUES (?, ?)", in: db) {
                $0.bind(Int64(1))
                $0.bind("one")
            }
            // The same cached statement, one value short: the second parameter must not be "one" again.
            #expect(throws: DatabaseError.self) {
                try DirectStatement.run("INSERT INTO t (a, b) VALUES (?, ?)", in: db) { $0.bind(Int64(2)) }
            }
        }
        #expect(try Self.rows(queue) == ["1 one"])
    }

    @Test("a value past the statement's parameters is a refused bind, and nothing runs")
    func extraValueThrows() throws {
        let queue = try Self.table()
        try queue.write { db in
            do {
                try DirectStatement.run("INSERT INTO t (a, b) VALUES (?, ?)", in: db) {
                    $0.bind(Int64(3))
                    $0.bind("three")
                    $0.bind("extra")
                }
                Issue.record("a third value was bound to two parameters")
            } catch let error as DatabaseError {
                #expect(error.message?.contains("binding parameter 3 failed") == true, "\(error)")
            }
            // The statement is usable again, with its values bound in full.
            try DirectStatement.run("INSERT INTO t (a, b) VALUES (?, ?)", in: db) {
                $0.bind(Int64(4))
                $0.bind(nil as String?)
            }
        }
        #expect(try Self.rows(queue) == ["4 nil"])
    }
}
