/// The short GUID in a share's URL: random when the store creates the share, kept for the share's life.
///
/// iCloud's share links cannot be guessed: whoever holds the URL of a share with a public permission joins
/// it, so a GUID derived from names anyone can learn (owner, zone, record) would open the share to anyone.
/// Stores make a random one; a recipe that wants the same URL on every machine (demo data) asks for a
/// derived one explicitly, and the local stores accept it on creation.
public enum ShortGUID {
    /// 25 base-62 characters (`0-9A-Za-z`, about 149 bits) from the system's cryptographically secure
    /// generator: the shape of the short GUIDs Apple's service answers, so a client that checks or stores them
    /// meets here what it meets there.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var guid = ""
        guid.reserveCapacity(length)
        // Rejection sampling: a byte at or above 248 (4 × 62) would make the first characters likelier.
        while guid.utf8.count < length {
            let byte = UInt8.random(in: 0...255, using: &generator)
            guard byte < 248 else { continue }
            guid.unicodeScalars.append(alphabet[Int(byte % 62)])
        }
        return guid
    }

    /// How long a random short GUID is.
    public static let length = 25
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".unicodeScalars)

    /// A GUID derived from text that names the share (a recipe's container, owner, zone, root and seed):
    /// the same on every machine, and guessable by anyone who knows that text.
    public static func derived(from text: String) -> String {
        StableName.fnv1a128Hex(text)
    }

    /// Whether `text` can be a short GUID a client proposes: 16 to 64 letters and digits (Apple's are base-62,
    /// sharelane's derived ones lowercase hex).
    public static func isWellFormed(_ text: String) -> Bool {
        (16...64).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
            }
    }
}
