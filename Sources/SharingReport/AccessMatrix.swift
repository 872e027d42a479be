import ShareKit

/// Users (rows) × shares (columns), each cell the right the user has to what the share covers.
///
/// Built from a `SharingSnapshot`; every cell is `AccessRules`' answer, so the matrix and the stores cannot
/// disagree.
public struct AccessMatrix: Sendable, Hashable {
    /// A column: one share, zone-wide or of a hierarchy.
    public struct Column: Sendable, Hashable {
        /// Stable across snapshots: the owner, the zone and the root.
        public var id: String
        /// `FamilyLists`, `Trips/italy`, or with the owner when there are several (`Trips/italy (alice)`).
        public var label: String
        public var share: Share
    }

    public var rows: [SharingUser]
    public var columns: [Column]
    /// `cells[row][column]`.
    public var cells: [[AccessCell]]

    public init(_ snapshot: SharingSnapshot) {
        let columns = snapshot.shares.map {
            Column(id: Self.columnID(of: $0), label: snapshot.label(of: $0), share: $0)
        }
        rows = snapshot.users
        self.columns = columns
        cells = snapshot.users.map { user in columns.map { AccessCell(user: user.recordName, share: $0.share) } }
    }

    /// The stable identity of a share's column.
    public static func columnID(of share: Share) -> String {
        [share.zoneID.ownerRecordName, share.zoneID.zoneName, share.rootRecordName ?? ""].joined(separator: "/")
    }

    /// The cell of `user` (a record name) in the column `id`; nil when the matrix has neither.
    public func cell(user: UserRecordName, column id: String) -> AccessCell? {
        guard let row = rows.firstIndex(where: { $0.recordName == user }),
            let column = columns.firstIndex(where: { $0.id == id })
        else { return nil }
        return cells[row][column]
    }

    /// Rows by record name and columns by id (the first of each, as `cell(user:column:)` finds them): the
    /// comparison of a plan's before and after looks up every user's cells, and a scan of the rows for each
    /// made the JSON plan of 100,000 users take 20.5 s of CPU (2.6 s without).
    struct Positions {
        var rows: [UserRecordName: Int] = [:]
        var columns: [String: Int] = [:]

        init(_ matrix: AccessMatrix) {
            rows.reserveCapacity(matrix.rows.count)
            for (index, row) in matrix.rows.enumerated() where rows[row.recordName] == nil {
                rows[row.recordName] = index
            }
            for (index, column) in matrix.columns.enumerated() where columns[column.id] == nil {
                columns[column.id] = index
            }
        }
    }

    /// `cell(user:column:)` through `positions`, made of this matrix.
    func cell(user: UserRecordName, column id: String, _ positions: Positions) -> AccessCell? {
        guard let row = positions.rows[user], let column = positions.columns[id] else { return nil }
        return cells[row][column]
    }

    /// The matrix narrowed to the users `text` names (handle, email or record name) and the columns of the zone
    /// `zone`; nil keeps all.
    public func narrowed(toUser text: String?, zone: String?) -> AccessMatrix {
        var copy = self
        let keptRows = rows.indices.filter { index in text.map { rows[index].isNamed($0) } ?? true }
        let keptColumns = columns.indices.filter { zone == nil || columns[$0].share.zoneID.zoneName == zone }
        copy.rows = keptRows.map { rows[$0] }
        copy.columns = keptColumns.map { columns[$0] }
        copy.cells = keptRows.map { row in keptColumns.map { cells[row][$0] } }
        return copy
    }

    /// A cell that differs between two matrices of the same store (a plan's before and after).
    public struct Change: Sendable, Hashable {
        public var user: SharingUser
        /// The label of the share, from whichever matrix has it.
        public var column: String
        public var columnID: String
        /// nil where that matrix has no such share (created or deleted by the change).
        public var before: AccessCell?
        public var after: AccessCell?
    }

    /// Every cell whose right or participation differs from `before` to `after`, in the after matrix's order
    /// (then the columns and rows only `before` has). A share that appears or disappears changes the cells of
    /// the users who have some right or place in it.
    public static func changes(from before: AccessMatrix, to after: AccessMatrix) -> [Change] {
        let (users, columns) = union(before, after)
        let (beforePositions, afterPositions) = (Positions(before), Positions(after))
        var result: [Change] = []
        for user in users {
            for column in columns {
                let old = before.cell(user: user.recordName, column: column.id, beforePositions)
                let new = after.cell(user: user.recordName, column: column.id, afterPositions)
                guard Self.differ(old, new) else { continue }
                result.append(Change(user: user, column: column.label, columnID: column.id, before: old, after: new))
            }
        }
        return result
    }

    /// The rows and columns of either matrix: `after`'s in its order, then those only `before` has.
    static func union(_ before: AccessMatrix, _ after: AccessMatrix) -> (rows: [SharingUser], columns: [Column]) {
        var columns = after.columns
        var columnIDs = Set(columns.map(\.id))
        for column in before.columns where columnIDs.insert(column.id).inserted { columns.append(column) }
        var rows = after.rows
        var recordNames = Set(rows.map(\.recordName))
        for user in before.rows where recordNames.insert(user.recordName).inserted { rows.append(user) }
        return (rows, columns)
    }

    static func differ(_ a: AccessCell?, _ b: AccessCell?) -> Bool {
        let none = AccessCell(access: .none)
        return (a ?? none) != (b ?? none)
    }
}
