import ShareKit

/// A store that reaches CloudKit Web Services (`http:` a running `sharelane serve`, `cloudkit:` Apple's
/// service): the endpoint it sends to, and what it remembers of the service's assets.
///
/// The command line asks for it where only such a store has an answer: the token file's and the asset
/// digests' keys, the container and environment the service names, `conformance`'s address.
public protocol ServiceStore: DownloadsAssets, KeepsWebAuthTokens {
    /// The service, container, environment and credentials.
    var endpoint: WebServicesEndpoint { get }
    /// The content digests of the service's asset checksums, so plans compare assets by content.
    var assetContents: AssetContentDigests { get }
}

/// A store that signs users in with web auth tokens, each answer handing out the token of the next request:
/// the newest ones are what the token file keeps when a command ends.
public protocol KeepsWebAuthTokens: Sendable {
    /// The newest web auth token of `user` (nil: the signed-in user on `cloudkit:`). A secret.
    func latestWebAuthToken(for user: UserRecordName?) async -> String?
    /// `cloudkit:`: the newest web auth token of the other user with this email address. A secret.
    func latestWebAuthToken(ofOtherUser email: String) async -> String?
}

// MARK: - ServiceStore

extension WebServicesStore: ServiceStore {}
