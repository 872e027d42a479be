import Foundation
import Synchronization
import ShareKit

/// What the client knows of a service's asset checksums that it cannot compute: each checksum, and the
/// `fnv1a64:HEX` of the bytes behind it (`AssetValue.content`).
///
/// Apple does not document how it computes `fileChecksum`, so a recipe's file (`PATH#fnv1a64:HEX`) cannot be
/// compared with a live asset by checksum. As Terraform keeps in its state what it cannot read back, the
/// `http:` and `cloudkit:` stores remember, after each upload, the checksum the service answered and the
/// digest of the bytes they sent; a read asset whose checksum they do not know is downloaded once and hashed.
/// With a file (`use(file:)`, which the command line sets beside its plan caches, one per store, container
/// and environment), what one command learned serves the next; without one, a process remembers for itself.
public final class AssetContentDigests: Sendable {
    private let state = Mutex((digests: [String: String](), file: URL?.none))
    /// Held while the file is read, merged and written, so that two zones read at once both land in it.
    private let fileWrite = Mutex(())

    public init() {}

    /// The file's format: `{"sharelane_asset_digests": 1, "digests": {CHECKSUM: "fnv1a64:HEX"}}`.
    struct Contents: Codable {
        var sharelane_asset_digests: Int
        var digests: [String: String]
    }

    /// Remembers through `file` from now on, after reading what it holds (an unreadable file is as if empty:
    /// what it held is learned again by downloading).
    public func use(file: URL) {
        let read = Self.read(file)
        state.withLock { state in
            state.file = file
            state.digests.merge(read) { mine, _ in mine }
        }
    }

    /// The `fnv1a64:HEX` of the bytes behind `checksum`, when known.
    public func content(of checksum: String) -> String? {
        state.withLock { $0.digests[checksum] }
    }

    /// Remembers `learned` (checksum → `fnv1a64:HEX`), and writes the file, merged with what another process
    /// may have written to it since.
    /// - Returns: false when the file could not be written (what it did not keep is downloaded again by the
    ///   next process).
    @discardableResult
    public func remember(_ learned: [String: String]) -> Bool {
        guard !learned.isEmpty else { return true }
        let file: URL? = state.withLock { state in
            state.digests.merge(learned) { _, new in new }
            return state.file
        }
        guard let file else { return true }
        return fileWrite.withLock { _ in
            var merged = Self.read(file)
            merged.merge(state.withLock { $0.digests }) { _, mine in mine }
            do {
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                try encoder.encode(Contents(sharelane_asset_digests: 1, digests: merged)).write(
                    to: file, options: .atomic)
                return true
            } catch {
                return false
            }
        }
    }

    private static func read(_ file: URL) -> [String: String] {
        guard let data = try? Data(contentsOf: file),
            let contents = try? JSONDecoder().decode(Contents.self, from: data), contents.sharelane_asset_digests == 1
        else { return [:] }
        return contents.digests.filter { $0.value.hasPrefix(AssetValue.checksumPrefix) }
    }
}
