import CloudKitWire
import Foundation
import ShareKit
import Synchronization

/// Keeps the token file (`TokenStore`) up to date: the stores a command opened with a token from it, and,
/// when the command ends, the newest token each of them was handed, written back.
enum TokenKeeper {
    private typealias Tracked = (store: any KeepsWebAuthTokens, entry: TokenStore.Entry, file: TokenStore, other: Bool)
    private static let tracked = Mutex<[Tracked]>([])

    /// Remembers that `store` started from `entry` of `file`; `other`: the entry is of another user than the
    /// signed-in one (`WebServicesEndpoint.otherWebAuthTokens`).
    static func track(_ store: any KeepsWebAuthTokens, entry: TokenStore.Entry, file: TokenStore, other: Bool = false) {
        tracked.withLock { $0.append((store, entry, file, other)) }
    }

    /// Writes back the newest token of every tracked store that was handed a new one. Failures are reported
    /// on standard error and do not change the command's outcome.
    static func flush() async {
        let all = tracked.withLock { tracked in
            defer { tracked = [] }
            return tracked
        }
        for (store, entry, file, other) in all {
            let newest =
                other
                ? await store.latestWebAuthToken(ofOtherUser: entry.email ?? "")
                : await store.latestWebAuthToken(for: entry.userRecordName)
            guard let newest, newest != entry.webAuthToken else { continue }
            var updated = entry
            updated.webAuthToken = newest
            updated.saved = Date()
            do {
                try file.upsert(updated)
            } catch {
                Terminal.printError("warning: \(error)")
            }
        }
    }

    /// The token file's key of a store: `cloudkit:CONTAINER` (with `@BASE_URL` for a service other than
    /// Apple's), or a `sharelane serve`'s base URL and container.
    static func key(for endpoint: WebServicesEndpoint) -> String {
        switch endpoint.kind {
        case .cloudKit:
            "cloudkit:\(endpoint.container)"
                + (endpoint.baseURL == WebServicesEndpoint.appleBaseURL ? "" : "@\(endpoint.baseURL)")
        case .emulator:
            "\(endpoint.baseURL) \(endpoint.container)"
        }
    }
}
