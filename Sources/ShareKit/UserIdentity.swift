/// How a user is looked up, as CloudKit's `lookupInfo` names them: by email address, phone number or user
/// record name.
public enum UserLookup: Sendable, Hashable, Codable, CustomStringConvertible {
    case email(String)
    /// In E.164 form (`+15551234567`; `PhoneNumber.normalized` makes it).
    case phone(String)
    case recordName(UserRecordName)

    public var description: String {
        switch self {
        case .email(let email): email
        case .phone(let phone): phone
        case .recordName(let name): name
        }
    }
}

/// A user as `users/discover`, `users/caller` and the `users/lookup/…` operations answer: the lookup that
/// found them, and — only for a user who chose to be discoverable, or for the caller themselves — their
/// record name and name. A user who is not discoverable, and one who does not exist, come back alike, with
/// the lookup only, so that nobody learns who uses the app.
public struct UserIdentity: Sendable, Hashable, Codable {
    public var lookup: UserLookup
    public var userRecordName: UserRecordName?
    /// The display name, such as `Alice Appleseed`.
    public var name: String?

    public init(lookup: UserLookup, userRecordName: UserRecordName? = nil, name: String? = nil) {
        self.lookup = lookup
        self.userRecordName = userRecordName
        self.name = name
    }

    /// Whether the lookup found a discoverable user.
    public var isFound: Bool { userRecordName != nil }
}

/// What a user lets others find of them: a phone number to be looked up by, and whether they are
/// discoverable at all (a new iCloud user is not, until they say so in an app).
public struct UserDiscoverability: Sendable, Hashable, Codable {
    /// In E.164 form; nil for none.
    public var phone: String?
    public var discoverable: Bool

    public init(phone: String? = nil, discoverable: Bool = false) {
        self.phone = phone
        self.discoverable = discoverable
    }
}

/// Email addresses as CloudKit names users by them: the one rule the recipe, the stores and `sharelane serve`
/// ask, so that an address one of them takes, every one takes.
public enum EmailAddress {
    /// The form that names a user: trimmed and lowercased (two spellings of one address are one user).
    public static func normalized(_ text: String) -> String {
        let trimmed = WhiteSpace.trimmed(text)
        // Lowercasing allocates even when nothing changes; most addresses are lowercase already.
        return trimmed.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 }) ? trimmed.lowercased() : trimmed
    }

    /// Why `text` is not an address a user can have, in words for a message; nil when it is one: one `@`
    /// with something on each side, no white space inside, at most `CloudKitLimits.emailAddressLength`
    /// characters once trimmed.
    public static func problem(_ text: String) -> String? {
        let address = normalized(text)
        if address.utf8.count > CloudKitLimits.emailAddressLength {
            return "an email address is at most \(CloudKitLimits.emailAddressLength) characters; this one has "
                + "\(address.utf8.count)"
        }
        let wellFormed: Bool
        if address.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            // Printable ASCII, so no white space: the bytes say it, where walking the characters was 6% of
            // an apply that signs in 100,000 users.
            let at = address.utf8.firstIndex(of: UInt8(ascii: "@"))
            wellFormed =
                at != nil && at != address.utf8.startIndex && address.utf8.last != UInt8(ascii: "@")
                && address.utf8.lastIndex(of: UInt8(ascii: "@")) == at
        } else {
            let parts = address.split(separator: "@", omittingEmptySubsequences: false)
            wellFormed =
                parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
                && !address.contains(where: { $0.isWhitespace })
        }
        guard wellFormed else {
            return "`\(address.count > 60 ? String(address.prefix(60)) + "…" : address)` is not an email address "
                + "(name@example.com)"
        }
        return nil
    }

    /// The refusal of an address a user cannot have (`BAD_REQUEST`, `problem`'s words), or nil.
    public static func check(_ text: String, subject: String? = nil) -> ShareError? {
        problem(text).map { ShareError(.badRequest, $0, subject: subject ?? String(text.prefix(60))) }
    }
}

/// Phone numbers as CloudKit looks users up by them.
public enum PhoneNumber {
    /// The number in E.164 form (`+` and 8 to 15 digits): spaces, dots, dashes and parentheses dropped;
    /// nil when what is left is not that.
    public static func normalized(_ text: String) -> String? {
        let kept = text.filter { !" .-()\u{a0}".contains($0) }
        guard kept.hasPrefix("+") else { return nil }
        let digits = kept.dropFirst()
        guard (8...15).contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            digits.first != "0"
        else { return nil }
        return "+" + digits
    }
}
