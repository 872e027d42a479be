import PlanModel
import Recipe
import ShareKit

/// A remembered recipe's users (`RememberedRecipe`): the recipe's declared users and the directory of them as
/// the store knew them, column by column, in the cache file.
///
/// A JSON object a user, twice (the recipe's and the directory's), was two thirds of the CPU of a no-op plan
/// of 100,000 users; JSON arrays, one a column, still half of it. So each column is one JSON string, a line a
/// user (`Lines`), and the places are one string of numbers. The directory's handles, addresses and names are
/// the recipe's in all but odd cases, so only its record names are written unless they differ.
struct PackedUsers: Codable {
    var handles: Lines
    var emails: Lines
    var names: Lines
    var phones: Lines
    /// A character a user: `t`rue, `f`alse, or `-` where the recipe does not say.
    var discoverable: String
    /// The files users are declared in, and for each user the index of its file, its line and its column,
    /// as decimal numbers each followed by a comma.
    var files: [String]
    var places: String
    /// The directory's record names, one a user, when its handles, addresses and names are the recipe's.
    var recordNames: Lines?
    /// The directory whole, when they are not.
    var directory: UserDirectory?
    var ownerHandle: String

    init(declared: [DeclaredUser], directory: UserDirectory) {
        handles = Lines(declared.map(\.handle))
        emails = Lines(declared.map(\.email))
        names = Lines(declared.map(\.name))
        phones = Lines(declared.map(\.phone))
        discoverable = String(
            declared.map { user -> Character in user.discoverable.map { $0 ? "t" : "f" } ?? "-" })
        var fileIndex: [String: Int] = [:]
        var files: [String] = []
        var places = ""
        places.reserveCapacity(declared.count * 12)
        for user in declared {
            let file: Int
            if let known = fileIndex[user.location.file] {
                file = known
            } else {
                file = files.count
                fileIndex[user.location.file] = file
                files.append(user.location.file)
            }
            places += "\(file),\(user.location.line),\(user.location.column),"
        }
        self.files = files
        self.places = places
        ownerHandle = directory.ownerHandle
        let entries = directory.entries
        let same =
            entries.count == declared.count
            && zip(entries, declared).allSatisfy {
                $0.handle == $1.handle && $0.email == $1.email && $0.name == $1.name
            }
        recordNames = same ? Lines(entries.map(\.recordName)) : nil
        self.directory = same ? nil : directory
    }

    /// The recipe's declared users.
    /// - Throws: `DecodingError` when the columns do not line up.
    func declared() throws -> [DeclaredUser] {
        let handles = try self.handles.strings()
        let count = handles.count
        let emails = try self.emails.strings()
        let names = self.names.values
        let phones = self.phones.values
        let discoverable = Array(self.discoverable.utf8)
        let places = Self.numbers(places)
        guard emails.count == count, names.count == count, phones.count == count, discoverable.count == count,
            places.count == 3 * count
        else { throw Self.misaligned }
        var users: [DeclaredUser] = []
        users.reserveCapacity(count)
        for index in 0..<count {
            let file = places[3 * index]
            guard files.indices.contains(file) else { throw Self.misaligned }
            let says: Bool? =
                switch discoverable[index] {
                case UInt8(ascii: "t"): true
                case UInt8(ascii: "f"): false
                default: nil
                }
            users.append(
                DeclaredUser(
                    handle: handles[index], email: emails[index], name: names[index],
                    location: SourceLocation(
                        file: files[file], line: places[3 * index + 1], column: places[3 * index + 2]),
                    phone: phones[index], discoverable: says))
        }
        return users
    }

    /// The directory of the users as the store knew them.
    /// - Throws: `DecodingError` when the columns do not line up.
    func userDirectory() throws -> UserDirectory {
        if let directory { return directory }
        let handles = try self.handles.strings()
        let emails = try self.emails.strings()
        let names = self.names.values
        guard let recordNames = recordNames?.values, recordNames.count == handles.count,
            emails.count == handles.count, names.count == handles.count
        else { throw Self.misaligned }
        var entries: [UserDirectory.Entry] = []
        entries.reserveCapacity(handles.count)
        for index in handles.indices {
            entries.append(
                UserDirectory.Entry(
                    handle: handles[index], email: emails[index], name: names[index], recordName: recordNames[index]))
        }
        return UserDirectory(entries: entries, ownerHandle: ownerHandle)
    }

    /// The numbers of `text`, each followed by a comma; none when one is not a number (the columns then do
    /// not line up).
    private static func numbers(_ text: String) -> [Int] {
        var numbers: [Int] = []
        var value = 0
        var digits = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ","), digits > 0 {
                numbers.append(value)
                value = 0
                digits = 0
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
            } else {
                return []  // the count then differs, and the memo is not used
            }
        }
        return digits == 0 ? numbers : []
    }

    private static let misaligned = DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: [], debugDescription: "the users' columns do not line up"))
}

extension PackedUsers {
    /// Optional strings as one JSON string: each value on a line of its own after `+`, a missing one as a line
    /// of `-`. Values with a line break in them are written as a JSON array instead.
    struct Lines: Codable {
        var values: [String?]

        init(_ values: [String?]) { self.values = values }

        /// The values, none missing.
        /// - Throws: `DecodingError` when one is.
        func strings() throws -> [String] {
            var strings: [String] = []
            strings.reserveCapacity(values.count)
            for value in values {
                guard let value else { throw PackedUsers.misaligned }
                strings.append(value)
            }
            return strings
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            guard let text = try? container.decode(String.self) else {
                values = try container.decode([String?].self)
                return
            }
            var values: [String?] = []
            for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropFirst() {
                switch line.first {
                case UInt8(ascii: "+"): values.append(String(decoding: line.dropFirst(), as: UTF8.self))
                case UInt8(ascii: "-") where line.count == 1: values.append(nil)
                default: throw PackedUsers.misaligned
                }
            }
            self.values = values
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            guard !values.contains(where: { $0?.utf8.contains(UInt8(ascii: "\n")) == true }) else {
                try container.encode(values)
                return
            }
            var text = ""
            for value in values {
                if let value {
                    text += "\n+"
                    text += value
                } else {
                    text += "\n-"
                }
            }
            try container.encode(text)
        }
    }
}
