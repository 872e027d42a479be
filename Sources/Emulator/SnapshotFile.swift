import CloudKitWire
import Foundation
import ShareKit

/// The format of a snapshot file (`serve --import`, `--export-on-exit`, `CloudKitEmulator.exportSnapshot`):
/// JSON, each world's SQLite database in base64. Docs/Testing.md describes it; `version` changes when it
/// does.
struct SnapshotFile: Codable {
    static let formatName = "sharelane-snapshot"
    static let currentVersion = 1

    struct World: Codable {
        var container: String
        var environment: CloudKitEnvironment
        /// The world's SQLite database file, base64.
        var database: String
        /// The seeded recipe's people, for `GET /_sharelane/users`.
        var users: [FixtureUser]?
    }

    var format: String
    var version: Int
    var worlds: [World]
}
