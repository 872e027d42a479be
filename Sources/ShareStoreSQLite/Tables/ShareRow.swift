import GRDB
import ShareKit

/// A row of `share`: a zone-wide share or a hierarchy share, without its participants. Read and written
/// through SQLite's C API only (`init(_:)`, `insert(in:)`), never as a GRDB record.
struct ShareRow {
    var zoneId: Int64
    var name: String
    /// The root record of a hierarchy share; nil for a zone-wide share.
    var root: String?
    var title: String?
    var publicPermission: Permission
    var seq: Int64
    var shortGUID: String
}

extension ShareRow {
    /// Every column, in the order `init(_:)` reads them and `insert(in:)` binds them.
    static let selection = "zoneId, name, root, title, publicPermission, seq, shortGUID"

    /// The row of a query whose first columns are `selection`'s, read through SQLite's C API: a zone's shares
    /// are read with it, and an acceptance reads its share (a thousand an apply of the benchmark, each a
    /// request of its own over `http:`).
    /// - Throws: `INTERNAL_ERROR` for a public permission the enum does not know (a damaged store).
    init(_ columns: borrowing DirectStatement.Columns) throws {
        let permission = columns.string(4)
        guard let publicPermission = Permission(rawValue: permission) else {
            throw ShareError(
                .internalError, "the store holds a share with an unknown public permission '\(permission)'",
                subject: columns.string(1))
        }
        self.init(
            zoneId: columns.int64(0), name: columns.string(1), root: columns.optionalString(2),
            title: columns.optionalString(3), publicPermission: publicPermission, seq: columns.int64(5),
            shortGUID: columns.string(6))
    }

    /// Inserts the row through a cached statement and SQLite's C API: an apply saves a hundred shares.
    func insert(in db: Database) throws {
        try DirectStatement.run(
            "INSERT INTO share (\(Self.selection)) VALUES (?, ?, ?, ?, ?, ?, ?)", in: db
        ) {
            $0.bind(zoneId)
            $0.bind(name)
            $0.bind(root)
            $0.bind(title)
            $0.bind(publicPermission)
            $0.bind(seq)
            $0.bind(shortGUID)
        }
    }
}
