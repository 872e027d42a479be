import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ShareKit

// MARK: - Requests

extension WebServicesStore {

    func cloudKitCurrentUser() async throws -> User {
        if let known = await sessions.cloudKitUser { return known }
        let response: WireUser = try await send(
            .usersCurrent, database: .public, body: nil as String?, as: nil)
        guard let user = response.user else {
            throw ShareError(.internalError, "users/current answered without a userRecordName")
        }
        await sessions.setCloudKitUser(user)
        return user
    }

    /// Sends a database request as `user`: signed server-to-server where the endpoint holds a key and the
    /// operation reaches the public database's records and zones (operations about the user go with the
    /// user's web auth token when there is one), on the user's token chain otherwise.
    func send<Body: Encodable & Sendable, Response: Decodable>(
        _ operation: WireOperation, database: DatabaseScope, body: Body?, as user: UserRecordName?
    ) async throws -> Response {
        try await sendNoting(operation, database: database, body: body, as: user).answer
    }

    /// `send`, and whether an earlier attempt of the request lost its connection after it went out, so that
    /// it may have been applied (`Reply.mayHaveLandedBefore`): a write settles what it meets then.
    func sendNoting<Body: Encodable & Sendable, Response: Decodable>(
        _ operation: WireOperation, database: DatabaseScope, body: Body?, as user: UserRecordName?
    ) async throws -> (answer: Response, mayHaveLandedBefore: Bool) {
        let path = operation.fullPath(
            container: endpoint.container, environment: endpoint.environment, database: database)
        let auth: RequestAuth
        if endpoint.kind == .cloudKit, database == .public, endpoint.signer != nil,
            !(operation.isAboutTheUser && endpoint.webAuthToken != nil)
        {
            auth = .signed
        } else {
            auth = .user(user)
        }
        let reply = try await reply(path: path, body: body, auth: auth)
        return (try reply.decoded(), reply.mayHaveLandedBefore)
    }

    func send<Body: Encodable & Sendable, Response: Decodable>(
        path: String, body: Body?, auth: RequestAuth
    ) async throws -> Response {
        try await reply(path: path, body: body, auth: auth).decoded()
    }

    private func reply<Body: Encodable & Sendable>(path: String, body: Body?, auth: RequestAuth) async throws -> Reply {
        let bodyData: Data?
        do {
            bodyData = try body.map { try WireCoding.body($0) }
        } catch {
            throw ShareError(.badRequest, "cannot encode the request for \(path): \(error)")
        }
        return try await chains.send(path: path, body: bodyData, auth: auth)
    }

    /// Sends `items` in requests of at most `CloudKitLimits.operationsPerRequest`, one after another, and
    /// joins the answers in the items' order.
    func inChunks<Item, Answer>(_ items: [Item], _ send: ([Item]) async throws -> [Answer]) async throws
        -> [Answer]
    {
        var answers: [Answer] = []
        answers.reserveCapacity(items.count)
        for chunk in items.chunked(CloudKitLimits.operationsPerRequest) { answers += try await send(chunk) }
        return answers
    }

    /// Matches a response array to the request, which must have one entry per item.
    static func inOrder<T>(_ items: [T], count: Int, what: WireOperation) throws -> [T] {
        guard items.count == count else {
            throw ShareError(
                .internalError, "\(what) answered \(items.count) entries for \(count) items; the response is malformed")
        }
        return items
    }
}
