import Recipe
import ShareKit

/// A remembered recipe's users (`RememberedRecipe`): the recipe's declared users and the directory of them as
/// the store knew them, column by column, in the cache file.
///
/// A JSON object a user, twice (the recipe's and the directory's), was three quarters of a no-op plan of
/// 100,000 users: JSON arrays of strings read several times faster than objects of keys. The directory's
/// handles, addresses and names are the recipe's in all but odd cases, so only its record names are written
/// unless they differ.
struct PackedUsers: Codable {
    var handles: [String]
    var emails: [String]
    var names: [String?]
    var phones: [String?]
    var discoverable: [Bool?]
    /// The files users are declared in, and for each user the index of its file, its line and its column.
    var files: [String]
    var places: [Int]
    /// The directory's record names, one a user, when its handles, addresses and names are the recipe's.
    var recordNames: [UserRecordName?]?
    /// The directory whole, when they are not.
    var directory: UserDirectory?
    var ownerHandle: String

    init(declared: [DeclaredUser], directory: UserDirectory) {
        handles = declared.map(\.handle)
        emails = declared.map(\.email)
        names = declared.map(\.name)
        phones = declared.map(\.phone)
        discoverable = declared.map(\.discoverable)
        var fileIndex: [String: Int] = [:]
        var files: [String] = []
        var places: [Int] = []
        places.reserveCapacity(declared.count * 3)
        for user in declared {
            let file: Int
            if let known = fileIndex[user.location.file] {
                file = known
            } else {
                file = files.count
                fileIndex[user.location.file] = file
                files.append(user.location.file)
            }
            places += [file, user.location.line, user.location.column]
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
        recordNames = same ? entries.map(\.recordName) : nil
        self.directory = same ? nil : directory
    }

    /// The recipe's declared users.
    /// - Throws: `DecodingError` when the columns do not line up.
    func declared() throws -> [DeclaredUser] {
        let count = handles.count
        guard emails.count == count, names.count == count, phones.count == count, discoverable.count == count,
            places.count == 3 * count
        else { throw Self.misaligned }
        var users: [DeclaredUser] = []
        users.reserveCapacity(count)
        for index in 0..<count {
            let file = places[3 * index]
            guard files.indices.contains(file) else { throw Self.misaligned }
            users.append(
                DeclaredUser(
                    handle: handles[index], email: emails[index], name: names[index],
                    location: SourceLocation(
                        file: files[file], line: places[3 * index + 1], column: places[3 * index + 2]),
                    phone: phones[index], discoverable: discoverable[index]))
        }
        return users
    }

    /// The directory of the users as the store knew them.
    /// - Throws: `DecodingError` when the columns do not line up.
    func userDirectory() throws -> UserDirectory {
        if let directory { return directory }
        guard let recordNames, recordNames.count == handles.count, emails.count == handles.count,
            names.count == handles.count
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

    private static let misaligned = DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: [], debugDescription: "the users' columns do not line up"))
}
