import GRDB
import ShareKit

/// The store's one sequence of numbers (the single row of `counter`). Every write takes the next number;
/// change tags and change tokens are made from them, so they differ on every write and order every change.
///
/// A write reads the counter once (`read`), takes numbers as it goes (`next`), and stores the last one at the
/// end (`store`), all inside its transaction.
struct ChangeSequence {
    /// The last number taken.
    private(set) var current: Int64
    /// Whether `next` was called since `read`.
    private(set) var advanced = false

    /// The counter as it stands in the database.
    static func read(_ db: Database) throws -> ChangeSequence {
        ChangeSequence(current: try CounterRow.current(db))
    }

    /// Takes the next number.
    mutating func next() -> Int64 {
        current += 1
        advanced = true
        return current
    }

    /// Writes the last number taken back to the counter; nothing when none was taken.
    func store(_ db: Database) throws {
        guard advanced else { return }
        try db.cachedStatement(sql: "UPDATE counter SET seq = ? WHERE id = 1").execute(arguments: [current])
    }

    /// Takes one number in a write that needs only one.
    static func next(_ db: Database) throws -> Int64 {
        var sequence = try read(db)
        let seq = sequence.next()
        try sequence.store(db)
        return seq
    }

    // MARK: - Tags and tokens

    /// The change tag of something last written at `seq`: base 36, short, and different on every write.
    static func tag(_ seq: Int64) -> String { String(seq, radix: 36) }

    /// A new epoch: random, short, base 36.
    static func newEpoch() -> String { String(UInt32.random(in: 1...UInt32.max), radix: 36) }

    /// The change token of a feed read up to `seq` in the store's epoch `epoch`.
    static func token(_ seq: Int64, epoch: String) -> ChangeToken {
        ChangeToken(rawValue: "s" + String(seq, radix: 36) + (epoch.isEmpty ? "" : "." + epoch))
    }

    /// The sequence number in a token; 0 (from the beginning) for no token.
    /// - Throws: `ShareError` (`BAD_REQUEST`) for a token this store did not hand out, or handed out before
    ///   it was reset (another epoch): reading from it would miss what the reset removed.
    static func seq(_ token: ChangeToken?, epoch: String) throws(ShareError) -> Int64 {
        guard let token else { return 0 }
        let parts = token.rawValue.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, first.hasPrefix("s"), let seq = Int64(first.dropFirst(), radix: 36), seq >= 0
        else {
            throw ShareError(
                .badRequest,
                "the change token '\(token.rawValue)' was not handed out by this store; fetch again without one")
        }
        // A token without an epoch comes from a store before epochs were kept: taken as this epoch's.
        if parts.count == 2, parts[1] != epoch {
            throw ShareError(
                .badRequest,
                "the change token '\(token.rawValue)' was handed out before this store was reset or replaced; fetch again without one"
            )
        }
        return seq
    }
}
