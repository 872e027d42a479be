/// The short GUID in a share's URL: random when the store creates the share, kept for the share's life.
///
/// iCloud's share links cannot be guessed: whoever holds the URL of a share with a public permission joins
/// it, so a GUID derived from names anyone can learn (owner, zone, record) would open the share to anyone.
/// Stores make a random one; a recipe that wants the same URL on every machine (demo data) asks for a
/// derived one explicitly, and the local stores accept it on creation.
public enum ShortGUID {
    /// 32 lowercase hex digits from the system's cryptographically secure generator (128 bits).
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return generator.next().sixteenHexDigits + generator.next().sixteenHexDigits
    }

    /// A GUID derived from text that names the share (a recipe's container, owner, zone, root and seed):
    /// the same on every machine, and guessable by anyone who knows that text.
    public static func derived(from text: String) -> String {
        StableName.fnv1a128Hex(text)
    }

    /// Whether `text` can be a short GUID a client proposes: 16 to 64 lowercase letters and digits.
    public static func isWellFormed(_ text: String) -> Bool {
        (16...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) }
    }
}
