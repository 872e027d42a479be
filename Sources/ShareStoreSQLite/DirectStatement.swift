import Foundation
import GRDB
import GRDBSQLite

/// One run of a prepared statement through SQLite's C API, for the statements run by the thousand: a record's
/// insert or update in an apply, the users, zones and acceptances an apply writes by the hundred, and the
/// reads of records by name or type that a lookup, a query and an apply's row cache make. GRDB's
/// `execute(arguments:)` boxes every value as an existential `DatabaseValueConvertible`, converts it to a
/// `DatabaseValue` and binds it in nested closures (a third of writing a record), and its row cursor binds the
/// same way and reads each column through `Row` (a quarter of answering a 200-record lookup).
///
/// The statement is a cached one of GRDB's, run inside the transaction GRDB opened. Only this type runs it, so
/// GRDB's own bookkeeping of its arguments is never relied on; the statement is reset, and its bindings
/// cleared, before it is bound, and reset after it ran. Strings and blobs are copied by SQLite
/// (`SQLITE_TRANSIENT`). A bind SQLite refuses, or a run with more or fewer values bound than the statement
/// has parameters, throws instead of running: a value is never silently missing, nor left from a previous run.
struct DirectStatement {
    private let statement: Statement
    private let handle: SQLiteStatement
    private var index: Int32 = 0
    /// The first bind SQLite refused: its result code and the parameter's place.
    private var refusedBind: (code: Int32, index: Int32)?

    init(_ statement: Statement) {
        self.statement = statement
        handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Notes a bind's result code; the first refusal is thrown when the statement runs.
    private mutating func check(_ code: Int32) {
        if code != SQLITE_OK, refusedBind == nil { refusedBind = (code, index) }
    }

    // MARK: Binding, in the order of the statement's parameters

    mutating func bind(_ value: Int64) {
        index += 1
        check(sqlite3_bind_int64(handle, index, value))
    }

    mutating func bind(_ value: Int64?) {
        guard let value else { return bindNull() }
        bind(value)
    }

    mutating func bind(_ value: String?) {
        guard var value else { return bindNull() }
        index += 1
        let (handle, index) = (handle, index)
        let code = value.withUTF8 { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), Self.transient)
                }
            }
            // An empty buffer may have no address, which SQLite would take for NULL.
            return sqlite3_bind_text(handle, index, "", 0, Self.transient)
        }
        check(code)
    }

    /// An enumerated column's value: its raw value, as GRDB stores ShareKit's enums (`ColumnTypes.swift`).
    mutating func bind<Value: RawRepresentable>(_ value: Value) where Value.RawValue == String {
        bind(value.rawValue)
    }

    /// Binds each of `values` in turn.
    mutating func bind(contentsOf values: some Sequence<String>) {
        for value in values { bind(value) }
    }

    mutating func bind(_ value: Data) {
        index += 1
        let (handle, index) = (handle, index)
        let code = value.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), Self.transient)
            }
            return sqlite3_bind_zeroblob(handle, index, 0)
        }
        check(code)
    }

    private mutating func bindNull() {
        index += 1
        check(sqlite3_bind_null(handle, index))
    }

    // MARK: Running

    /// Runs the cached statement of `sql`, which answers no rows, once: its parameters bound in order by `bind`.
    static func run(_ sql: String, in db: Database, binding bind: (inout DirectStatement) -> Void) throws {
        var statement = DirectStatement(try db.cachedStatement(sql: sql))
        bind(&statement)
        try statement.run()
    }

    /// Runs a statement that answers no rows once; the database's error when it fails.
    func run() throws {
        try checkBindings()
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else { throw failure(code) }
        sqlite3_reset(handle)
    }

    /// Runs a query, calling `body` with each row in turn (read it with the column accessors, inside `body` only)
    /// until the rows end or `body` answers false; the database's error when a step fails.
    func forEachRow(_ body: (borrowing Columns) throws -> Bool) throws {
        try checkBindings()
        defer { sqlite3_reset(handle) }
        let columns = Columns(handle: handle)
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw failure(code) }
            guard try body(columns) else { return }
        }
    }

    /// Throws when a bind was refused, or when the values bound are not as many as the parameters.
    private func checkBindings() throws {
        if let refused = refusedBind {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: refused.code),
                message: "binding parameter \(refused.index) failed: "
                    + String(cString: sqlite3_errstr(refused.code)), sql: statement.sql)
        }
        let parameters = sqlite3_bind_parameter_count(handle)
        guard index == parameters else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "\(index) values bound to a statement of \(parameters) parameters", sql: statement.sql)
        }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        let message = String(cString: sqlite3_errmsg(sqlite3_db_handle(handle)))
        sqlite3_reset(handle)
        // The SQL is read only here: GRDB makes its text anew on every read.
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }

    /// SQLite copies the value before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// The current row of a query, its columns counted from 0. Valid only while `forEachRow` calls its body.
    struct Columns: ~Copyable {
        fileprivate let handle: SQLiteStatement

        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

        func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

        func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

        /// A text column's value; its bytes repaired as `String(decoding:as:)` does, should they not be UTF-8.
        func string(_ column: Int32) -> String {
            guard let text = sqlite3_column_text(handle, column) else { return "" }
            let count = Int(sqlite3_column_bytes(handle, column))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }

        func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

        /// A text column's UTF-8 bytes in place: valid until the row is left, as SQLite keeps them.
        func text(_ column: Int32) -> UnsafeRawBufferPointer {
            guard let text = sqlite3_column_text(handle, column) else {
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            return UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
        }

        func optionalText(_ column: Int32) -> UnsafeRawBufferPointer? { isNull(column) ? nil : text(column) }

        /// A blob column's bytes in place: valid until the row is left, as SQLite keeps them.
        func blob(_ column: Int32) -> UnsafeRawBufferPointer {
            // The blob first, then its size, as SQLite's documentation asks.
            let bytes = sqlite3_column_blob(handle, column)
            let count = Int(sqlite3_column_bytes(handle, column))
            return UnsafeRawBufferPointer(start: count > 0 ? bytes : nil, count: count)
        }

        func data(_ column: Int32) -> Data { Data(blob(column)) }
    }
}
