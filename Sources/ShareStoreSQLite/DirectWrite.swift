import Foundation
import GRDB
import GRDBSQLite

/// One run of a prepared write statement with its values bound through SQLite's C API, for the writes an apply
/// makes by the thousand (a record's insert or update). GRDB's `execute(arguments:)` boxes every value as an
/// existential `DatabaseValueConvertible`, converts it to a `DatabaseValue` and binds it in nested closures:
/// a third of writing a record (issue 18).
///
/// The statement is a cached one of GRDB's, run inside the transaction GRDB opened. Only this type runs it, so
/// GRDB's own bookkeeping of its arguments is never relied on; the statement is reset before it is bound and
/// after it ran. Strings and blobs are copied by SQLite (`SQLITE_TRANSIENT`).
struct DirectWrite {
    private let statement: Statement
    private let handle: SQLiteStatement
    private var index: Int32 = 0

    init(_ statement: Statement) {
        self.statement = statement
        handle = statement.sqliteStatement
        sqlite3_reset(handle)
    }

    mutating func bind(_ value: Int64) {
        index += 1
        sqlite3_bind_int64(handle, index, value)
    }

    mutating func bind(_ value: Int64?) {
        guard let value else { return bindNull() }
        bind(value)
    }

    mutating func bind(_ value: String?) {
        guard var value else { return bindNull() }
        index += 1
        value.withUTF8 { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                _ = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), Self.transient)
                }
            } else {
                // An empty buffer may have no address, which SQLite would take for NULL.
                _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
    }

    mutating func bind(_ value: Data) {
        index += 1
        value.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                _ = sqlite3_bind_blob(handle, index, base, Int32(bytes.count), Self.transient)
            } else {
                _ = sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }

    private mutating func bindNull() {
        index += 1
        sqlite3_bind_null(handle, index)
    }

    /// Runs the statement once; the database's error when it fails.
    func run() throws {
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(sqlite3_db_handle(handle)))
            sqlite3_reset(handle)
            // The SQL is read only here: GRDB makes its text anew on every read.
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
        sqlite3_reset(handle)
    }

    /// SQLite copies the value before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
