import Foundation
import ShareKit

/// Where a `WebServicesStore` sends its requests and with which credentials.
///
/// Two kinds share one client: a local `sharelane serve` (`http://HOST:PORT`), which signs in any user by
/// email address, and Apple's CloudKit Web Services (`cloudkit:`), which acts only as the user whose web
/// auth token it holds, and signs public-database requests with a server-to-server key when given one.
public struct WebServicesEndpoint: Sendable {
    /// Which service is at the other end.
    public enum Kind: Sendable, Hashable {
        /// `sharelane serve`: signs in any user with `POST /auth/signin`.
        case emulator
        /// Apple's service: acts as the signed-in user only.
        case cloudKit
    }

    /// Apple's service.
    public static let appleBaseURL = "https://api.apple-cloudkit.com"

    public var kind: Kind
    /// `http://127.0.0.1:8420` or `https://api.apple-cloudkit.com`, without a trailing slash.
    public var baseURL: String
    public var container: String
    /// `development` or `production`.
    public var environment: String
    /// Sent as `ckAPIToken`; a secret: never printed.
    public var apiToken: String?
    /// The signed-in user's web auth token (`cloudkit:` only); a secret: never printed.
    public var webAuthToken: String?
    /// Signs public-database requests server-to-server (`cloudkit:` only).
    public var signer: RequestSigner?
    /// `cloudkit:`: the email address of the user of `webAuthToken` when it is known (the token file keeps
    /// it): a sign-in as another address is then refused rather than taken for that user.
    public var webAuthEmail: String?
    /// `cloudkit:`: web auth tokens of other users of the container, each from a `sharelane login` of their
    /// own, by email address: the store acts as each of them too (a recipe's other owners). Secrets.
    public var otherWebAuthTokens: [String: String] = [:]

    public init(
        kind: Kind, baseURL: String, container: String, environment: String, apiToken: String?,
        webAuthToken: String? = nil, signer: RequestSigner? = nil
    ) {
        self.kind = kind
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.container = container
        self.environment = environment
        self.apiToken = apiToken
        self.webAuthToken = webAuthToken
        self.signer = signer
    }

    /// A running `sharelane serve` at `url` (`http://HOST:PORT`).
    public static func emulator(url: String, apiToken: String?, container: String, environment: String)
        -> WebServicesEndpoint
    {
        WebServicesEndpoint(
            kind: .emulator, baseURL: url, container: container, environment: environment, apiToken: apiToken)
    }

    /// Apple's service, with credentials from the environment (Docs/CloudKit.md).
    ///
    /// `CLOUDKIT_API_TOKEN` with `CLOUDKIT_WEB_AUTH_TOKEN` act as the signed-in user; `CLOUDKIT_KEY_ID` with
    /// `CLOUDKIT_PRIVATE_KEY_FILE` sign public-database requests; `CLOUDKIT_BASE_URL` replaces Apple's URL.
    /// - Throws: `ShareError` (`AUTHENTICATION_REQUIRED`) when no credential is set, or
    ///   (`AUTHENTICATION_FAILED`) when the key file cannot be read.
    public static func cloudKit(
        environmentVariables env: [String: String], container: String, environment: String
    ) throws -> WebServicesEndpoint {
        func value(_ name: String) -> String? {
            guard let text = env[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
                return nil
            }
            return text
        }
        var signer: RequestSigner?
        switch (value("CLOUDKIT_KEY_ID"), value("CLOUDKIT_PRIVATE_KEY_FILE")) {
        case (let keyID?, let path?):
            let pem: String
            do {
                pem = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ShareError(
                    .authenticationFailed,
                    "cannot read the server-to-server key at CLOUDKIT_PRIVATE_KEY_FILE (\(path)): check the path "
                        + "and its permissions")
            }
            signer = try RequestSigner(keyID: keyID, pem: pem)
        case (nil, nil):
            break
        case (nil, _):
            throw ShareError(
                .authenticationFailed, "CLOUDKIT_PRIVATE_KEY_FILE is set but CLOUDKIT_KEY_ID is not: set both")
        case (_, nil):
            throw ShareError(
                .authenticationFailed, "CLOUDKIT_KEY_ID is set but CLOUDKIT_PRIVATE_KEY_FILE is not: set both")
        }
        let apiToken = value("CLOUDKIT_API_TOKEN")
        let webAuthToken = value("CLOUDKIT_WEB_AUTH_TOKEN")
        if signer == nil, apiToken == nil {
            throw ShareError(
                .authenticationRequired,
                "cloudkit: needs credentials: sign in with `sharelane login --store cloudkit:CONTAINER` (with "
                    + "CLOUDKIT_API_TOKEN set once), or set CLOUDKIT_API_TOKEN and CLOUDKIT_WEB_AUTH_TOKEN (the "
                    + "signed-in user), or CLOUDKIT_KEY_ID and CLOUDKIT_PRIVATE_KEY_FILE (public database only); see "
                    + "Docs/CloudKit.md")
        }
        return WebServicesEndpoint(
            kind: .cloudKit, baseURL: value("CLOUDKIT_BASE_URL") ?? appleBaseURL, container: container,
            environment: environment, apiToken: apiToken, webAuthToken: webAuthToken, signer: signer)
    }
}

// MARK: - CustomStringConvertible

extension WebServicesEndpoint: CustomStringConvertible {
    /// Names the service and container; never the credentials.
    public var description: String {
        switch kind {
        case .emulator: baseURL
        case .cloudKit: "cloudkit:\(container)/\(environment)"
        }
    }
}
