import Foundation
import ShareKit

/// The token chains of a `WebServicesStore`. Each sign-in starts a chain: a web auth token that every
/// answer replaces with the next, so requests on one chain go one after another. A user of the emulator
/// gets more chains (up to the store's parallelism, `SessionBook.chainsPerUser`) when all of theirs are busy, and signs in
/// again once when the emulator says the token ran out; `cloudkit:` has the one chain of its signed-in user.
struct TokenChains: Sendable {
    let transport: WebServicesTransport
    let sessions: SessionBook

    var endpoint: WebServicesEndpoint { transport.endpoint }

    /// Sends one request: as a user, on one of their chains; otherwise (API token only, signed) as it is.
    func send(path: String, body bodyData: Data?, auth: RequestAuth) async throws -> Reply {
        switch auth {
        case .apiTokenOnly, .signed:
            return try await transport.attempt(path: path, body: bodyData, auth: auth, token: nil)
        case .user(let user):
            let picked = try await sessions.session(for: user, kind: endpoint.kind, displayName: transport.displayName)
            let session: SessionBook.Session
            if endpoint.kind == .emulator, let user, await sessions.shouldGrow(user) {
                // Every session of this user is busy: sign in once more, for a token chain of its own, so that
                // several requests as this user (writes to several zones) are under way at once.
                session = await addSession(for: user, like: picked) ?? picked
            } else {
                session = picked
            }
            await sessions.begin(session.key)
            let reply: Reply
            do {
                reply = try await gatedRequest(session: session, path: path, body: bodyData, auth: auth)
            } catch {
                await sessions.end(session.key)
                throw error
            }
            await sessions.end(session.key)
            return reply
        }
    }

    /// Sends one request on a session's token chain, one at a time per session: each request needs the token
    /// the previous answer handed out.
    private func gatedRequest(session: SessionBook.Session, path: String, body bodyData: Data?, auth: RequestAuth)
        async throws -> Reply
    {
        try await session.gate.run { () async throws -> Reply in
            var reSignedIn = false
            var landedBefore = false
            while true {
                let token = await self.sessions.token(of: session.key)
                var reply = try await self.transport.attempt(path: path, body: bodyData, auth: auth, token: token)
                // An attempt before the sign-in below may have been applied: the answer after it says so too.
                landedBefore = landedBefore || reply.mayHaveLandedBefore
                reply.mayHaveLandedBefore = landedBefore
                if let next = reply.nextToken { await self.sessions.rotate(session.key, to: next) }
                if reply.status == 421, self.endpoint.kind == .emulator, !reSignedIn, let email = session.email {
                    // The emulator's token ran out (or it restarted): sign in again once, then retry.
                    reSignedIn = true
                    let signInBody = try WireCoding.bodyEncoder().encode(
                        SignInRequest(emailAddress: email, name: session.name, for: self.endpoint))
                    let again: SignInResponse = try await self.transport.attempt(
                        path: WireSpelling.signInPath, body: signInBody, auth: .apiTokenOnly, token: nil
                    ).decoded()
                    await self.sessions.rotate(session.key, to: again.ckWebAuthToken)
                    continue
                }
                if reply.status == 421, self.endpoint.kind == .cloudKit {
                    let reason = reply.wireError?.reason ?? "sign-in needed"
                    throw ShareError(
                        .authenticationRequired,
                        "CloudKit refused the web auth token (\(reason)): sign in again with `sharelane login "
                            + "--store cloudkit:\(self.endpoint.container)`, or set CLOUDKIT_WEB_AUTH_TOKEN to a new "
                            + "token (Docs/CloudKit.md)")
                }
                return reply
            }
        }
    }

    /// A new emulator session for `user`, signed in with the email address of `session`; nil when that
    /// sign-in fails (the user keeps the sessions they have).
    private func addSession(for user: UserRecordName, like session: SessionBook.Session) async -> SessionBook.Session? {
        guard let email = session.email,
            let body = try? WireCoding.bodyEncoder().encode(
                SignInRequest(emailAddress: email, name: session.name, for: self.endpoint)),
            let reply = try? await transport.attempt(
                path: WireSpelling.signInPath, body: body, auth: .apiTokenOnly, token: nil),
            let signedIn: SignInResponse = try? reply.decoded(), signedIn.userRecordName == user
        else {
            await sessions.growthFailed(for: user)
            return nil
        }
        return await sessions.addSession(for: user, email: email, name: session.name, token: signedIn.ckWebAuthToken)
    }
}
