import Foundation
import ShareKit

/// The web auth tokens of `sharelane login`: one JSON file readable only by its owner (mode 0600, in a
/// directory of mode 0700), at `$SHARELANE_TOKEN_FILE`, else `$XDG_CONFIG_HOME/sharelane/tokens.json`, else
/// `~/.config/sharelane/tokens.json`. One entry per store (service and container), environment and user;
/// every command that uses the store writes back the newest token the service handed out, and
/// `sharelane logout` removes entries. The tokens are secrets: nothing here prints them.
struct TokenStore {
    /// One signed-in user of one store and environment.
    struct Entry: Codable, Equatable {
        /// `cloudkit:CONTAINER` (with `@BASE_URL` when `CLOUDKIT_BASE_URL` replaces Apple's), or the base
        /// URL and container of a `sharelane serve` (`http://127.0.0.1:8420 iCloud.local.sharelane`).
        var store: String
        var environment: String
        var userRecordName: String
        var email: String?
        /// The API token the sign-in used, so that later commands need none in the environment.
        var apiToken: String?
        var webAuthToken: String
        var saved: Date
    }

    /// The environment variable that names the token file instead of the default place.
    static let fileVariable = "SHARELANE_TOKEN_FILE"

    let path: String

    /// The token file for this environment (see the type's documentation).
    static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let file = environment[fileVariable], !file.isEmpty { return file }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            return (config as NSString).appendingPathComponent("sharelane/tokens.json")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return (home as NSString).appendingPathComponent(".config/sharelane/tokens.json")
    }

    static var standard: TokenStore { TokenStore(path: defaultPath()) }

    /// Every entry; none when the file does not exist.
    /// - Throws: `CommandFailure` when the file cannot be read or is not a token file.
    func load() throws -> [Entry] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode([Entry].self, from: data)
        } catch {
            throw CommandFailure.input(
                "cannot read the token file \(path): it is not a sharelane token file; remove it and sign in again "
                    + "with `sharelane login`")
        }
    }

    /// Writes `entries`, readable and writable by the owner only; an empty list removes the file.
    /// - Throws: `CommandFailure` when the file cannot be written.
    func save(_ entries: [Entry]) throws {
        let manager = FileManager.default
        if entries.isEmpty {
            if manager.fileExists(atPath: path) {
                do { try manager.removeItem(atPath: path) } catch {
                    throw CommandFailure.input("cannot remove the token file \(path): \(error.localizedDescription)")
                }
            }
            return
        }
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty, !manager.fileExists(atPath: directory) {
                try manager.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            let data = try encoder.encode(entries)
            // Written beside the file with mode 0600 from the start, then moved over it.
            let temporary = path + ".\(ProcessInfo.processInfo.processIdentifier).tmp"
            guard manager.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
            else { throw CommandFailure.input("cannot write the token file \(temporary)") }
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: temporary)
            if rename(temporary, path) != 0 {
                try? manager.removeItem(atPath: temporary)
                throw CommandFailure.input("cannot write the token file \(path): \(String(cString: strerror(errno)))")
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.input("cannot write the token file \(path): \(error.localizedDescription)")
        }
    }

    /// The newest entry of a store and environment, of `user` (record name or email address) when given.
    func find(store: String, environment: String, user: String? = nil) throws -> Entry? {
        try load().filter { entry in
            entry.store == store && entry.environment == environment
                && (user == nil || entry.userRecordName == user
                    || entry.email.map(EmailAddress.normalized) == user.map(EmailAddress.normalized))
        }.max { $0.saved < $1.saved }
    }

    /// Adds or replaces the entry of the same store, environment and user.
    func upsert(_ entry: Entry) throws {
        var entries = try load().filter {
            !($0.store == entry.store && $0.environment == entry.environment
                && $0.userRecordName == entry.userRecordName)
        }
        entries.append(entry)
        try save(entries)
    }

    /// Removes the entries of a store and environment (of `user` only, when given); answers how many.
    func remove(store: String, environment: String, user: String? = nil) throws -> Int {
        let entries = try load()
        let kept = entries.filter { entry in
            !(entry.store == store && entry.environment == environment
                && (user == nil || entry.userRecordName == user
                    || entry.email.map(EmailAddress.normalized) == user.map(EmailAddress.normalized)))
        }
        try save(kept)
        return entries.count - kept.count
    }
}
