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
    /// Nil in a row written before the store kept them.
    var created: Stamp?
    var modified: Stamp?
}

extension ShareRow {
    /// Every column, in the order `init(_:)` reads them and `insert(in:)` binds them.
    static let selection =
        "zoneId, name, root, title, publicPermission, seq, shortGUID, createdAt, createdBy, modifiedAt, modifiedBy"

    /// How many columns `selection` names: a query's own columns follow them.
    static let columnCount = Int32(selection.split(separator: ",").count)

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
            shortGUID: columns.string(6), created: Self.stamp(columns, at: 7), modified: Self.stamp(columns, at: 9))
    }

    /// The stamp in the columns `at` (milliseconds) and `at + 1` (the user), nil where they are null.
    private static func stamp(_ columns: borrowing DirectStatement.Columns, at column: Int32) -> Stamp? {
        guard !columns.isNull(column), let user = columns.optionalString(column + 1) else { return nil }
        return Stamp(timestamp: columns.int64(column), userRecordName: user)
    }

    /// Inserts the row through a cached statement and SQLite's C API: an apply saves a hundred shares.
    func insert(in db: Database) throws {
        try DirectStatement.run(
            "INSERT INTO share (\(Self.selection)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", in: db
        ) {
            $0.bind(zoneId)
            $0.bind(name)
            $0.bind(root)
            $0.bind(title)
            $0.bind(publicPermission)
            $0.bind(seq)
            $0.bind(shortGUID)
            $0.bind(created?.timestamp)
            $0.bind(created?.userRecordName)
            $0.bind(modified?.timestamp)
            $0.bind(modified?.userRecordName)
        }
    }
}
