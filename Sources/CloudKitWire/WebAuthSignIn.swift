import AsyncHTTPClient
import Foundation
import Logging
import ShareKit

/// Obtaining a web auth token, as `sharelane login` does.
///
/// On `sharelane serve` (`http:`) the emulator signs anyone in by email address (`POST /auth/signin`). On
/// Apple's service (`cloudkit:`) a request without a user is refused with `AUTHENTICATION_REQUIRED` and a
/// `redirectURL`; the user signs in there in a browser, which then goes to the sign-in callback with
/// `ckWebAuthToken`. `sharelane serve` answers the same way, so the flow is tested against it.
public struct WebAuthSignIn: Sendable {
    public let endpoint: WebServicesEndpoint
    private let transport: WebServicesTransport

    public init(
        endpoint: WebServicesEndpoint, httpClient: HTTPClient = WebServicesStore.failFastClient,
        reachTimeout: Double = WebServicesStore.defaultReachTimeout, logger: Logger
    ) {
        var endpoint = endpoint
        // Only the API token and the token being obtained: never a key's signature.
        endpoint.signer = nil
        endpoint.webAuthToken = nil
        self.endpoint = endpoint
        transport = WebServicesTransport(
            endpoint: endpoint, retryPolicy: RetryPolicy(), httpClient: httpClient, timeout: .seconds(60),
            reachTimeout: reachTimeout, counter: RequestCounter(), logger: logger)
    }

    /// A signed-in user and their newest web auth token.
    public struct Session: Sendable {
        public var user: User
        /// A secret: never printed.
        public var webAuthToken: String
    }

    /// `sharelane serve` only: signs in by email address.
    public func signIn(email: String, name: String? = nil) async throws -> Session {
        let body = try WireCoding.bodyEncoder().encode(SignInRequest(emailAddress: email, name: name, for: endpoint))
        let response: SignInResponse = try await transport.attempt(
            path: WireSpelling.signInPath, body: body, auth: .apiTokenOnly, token: nil
        ).decoded()
        return Session(
            user: User(recordName: response.userRecordName, email: response.emailAddress ?? email, name: response.name),
            webAuthToken: response.ckWebAuthToken)
    }

    /// Where to sign in: the `redirectURL` of the service's refusal of `users/current` without a user.
    /// - Throws: `ShareError` when the service answers otherwise (a bad API token is `AUTHENTICATION_FAILED`).
    public func redirectURL() async throws -> String {
        let reply = try await transport.attempt(path: currentUserPath, body: nil, auth: .apiTokenOnly, token: nil)
        if reply.status == 421, let url = reply.wireError?.redirectURL, !url.isEmpty { return url }
        if let error = reply.wireError { throw error.shareError(subject: nil) }
        throw ShareError(
            .internalError,
            "\(endpoint) answered users/current without a user with HTTP \(reply.status) and no redirectURL to sign in at"
        )
    }

    /// The user a web auth token belongs to, and the token the answer handed out next (the same one when the
    /// service handed out none).
    public func session(token: String) async throws -> Session {
        let reply = try await transport.attempt(path: currentUserPath, body: nil, auth: .user(nil), token: token)
        let user: WireUser = try reply.decoded()
        guard let found = user.user else {
            throw ShareError(.internalError, "users/current answered without a userRecordName")
        }
        return Session(user: found, webAuthToken: reply.nextToken ?? token)
    }

    private var currentUserPath: String {
        WireOperation.usersCurrent.fullPath(
            container: endpoint.container, environment: endpoint.environment, database: .public)
    }
}
