import ShareKit

/// Change tags and change tokens, made from the store's sequence numbers.
enum ChangeTags {
    /// The change tag of something last written at `seq`: base 36, short, and different on every write.
    static func tag(_ seq: Int64) -> String { String(seq, radix: 36) }

    static func token(_ seq: Int64) -> ChangeToken { ChangeToken(rawValue: "s" + String(seq, radix: 36)) }

    /// The sequence number in a token; nil (from the beginning) for no token.
    /// - Throws: `ShareError` (`BAD_REQUEST`) for a token this store did not hand out.
    static func seq(_ token: ChangeToken?) throws(ShareError) -> Int64 {
        guard let token else { return 0 }
        guard token.rawValue.hasPrefix("s"), let seq = Int64(token.rawValue.dropFirst(), radix: 36), seq >= 0 else {
            throw ShareError(
                .badRequest,
                "the change token '\(token.rawValue)' was not handed out by this store; fetch again without one")
        }
        return seq
    }
}

/// GRDB also has a `Record`: in this module the name means ShareKit's.
typealias Record = ShareKit.Record
