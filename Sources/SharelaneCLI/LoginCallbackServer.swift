import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The one-shot server of `sharelane login` on 127.0.0.1: the sign-in page sends the browser to
/// `http://127.0.0.1:PORT/callback?state=…&ckWebAuthToken=…`, the server answers a page saying it may be
/// closed, and hands the token over; then it stops. It never logs the token.
///
/// Any program on the machine can reach a loopback port, so an answer counts only when it carries the random
/// `state` of this sign-in, which only the URL `login` printed holds (RFC 6749 §10.12, RFC 8252 §8.9); it
/// counts once, and only from a loopback address, within the wait. Every other answer is refused with 400 and
/// the wait goes on for the right one: a token another program sends never becomes the signed-in user.
enum LoginCallbackServer {
    /// Starts the server on `port` (0 picks a free one), calls `ready` with the callback URL (which carries the
    /// state), and waits up to `timeout` seconds for the token. `refused` is told of every answer refused.
    /// - Throws: `CommandFailure` when the port cannot be bound or no token arrives in time.
    static func receiveToken(
        port: Int, timeout: Double, ready: @escaping @Sendable (String) -> Void,
        refused: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> String {
        let state = CallbackState()
        let (tokens, tokenSink) = AsyncStream<String>.makeStream()
        let router = Router(context: CallbackRequestContext.self)
        router.get("/callback") { request, context -> Response in
            guard context.fromLoopback else {
                refused("an answer from another machine")
                return page("Refused", "The sign-in callback answers only this machine.", status: .badRequest)
            }
            guard let sent = request.uri.queryParameters["state"].map(String.init), state.matches(sent) else {
                refused("an answer without this sign-in's state")
                return page(
                    "Refused",
                    "This answer does not carry the state of the sign-in sharelane started; it was ignored. "
                        + "Sign in through the URL `sharelane login` printed.", status: .badRequest)
            }
            guard let token = request.uri.queryParameters["ckWebAuthToken"].map(String.init), !token.isEmpty else {
                return page(
                    "No token", "The sign-in came back without a ckWebAuthToken. Try `sharelane login` again.",
                    status: .badRequest)
            }
            // The state is spent by the first answer carrying a token: a second one is refused.
            guard state.spend() else {
                refused("a second answer for a sign-in already received")
                return page("Refused", "This sign-in was already received.", status: .badRequest)
            }
            tokenSink.yield(token)
            return page("Signed in", "sharelane has the sign-in. You can close this window.")
        }
        let quiet = Logger(label: "sharelane.login.callback") { _ in SwiftLogNoOpLogHandler() }
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                ready("http://127.0.0.1:\(channel.localAddress?.port ?? port)/callback?state=\(state.value)")
            },
            logger: quiet)
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                do {
                    try await application.run()
                } catch {
                    throw CommandFailure.conflict(
                        "cannot listen for the sign-in on 127.0.0.1:\(port): \(error); try --callback-port")
                }
                return nil
            }
            group.addTask {
                for await token in tokens {
                    // The browser's page is answered before the server stops with the group.
                    try? await Task.sleep(for: .milliseconds(500))
                    return token
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                throw CommandFailure.store(
                    "no sign-in came back within \(Int(timeout)) s; nothing was saved. Try again (longer with --wait), "
                        + "or use --paste")
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let token = result { return token }
            }
            throw CommandFailure.store("the sign-in callback server stopped before a token came")
        }
    }

    private static func page(_ title: String, _ text: String, status: HTTPResponse.Status = .ok) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(title)</title></head>\
            <body style="font-family:system-ui,sans-serif;max-width:32em;margin:3em auto"><h1>\(title)</h1>\
            <p>\(text)</p></body></html>
            """
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

/// The random state of one sign-in: 32 bytes from the system's secure generator, base64url, spent once.
private final class CallbackState: Sendable {
    let value: String
    private let spent = Mutex(false)

    init() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        value = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether `text` is the state, compared in a time that does not depend on where they differ.
    func matches(_ text: String) -> Bool {
        let expected = Array(value.utf8)
        let given = Array(text.utf8)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(expected, given) { difference |= left ^ right }
        return difference == 0
    }

    /// Spends the state: true for the first caller only.
    func spend() -> Bool {
        spent.withLock { spent in
            defer { spent = true }
            return !spent
        }
    }
}

/// A request of the callback server, with the address its connection came from (the socket's).
private struct CallbackRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Whether the connection came from this machine. The server listens on 127.0.0.1 only, so this holds for
    /// every connection; it is checked so that a change of the address cannot open the callback to others.
    let fromLoopback: Bool

    init(source: Source) {
        coreContext = .init(source: source)
        let ip = source.channel.remoteAddress?.ipAddress ?? ""
        fromLoopback = ip.hasPrefix("127.") || ip == "::1" || ip == "::ffff:127.0.0.1"
    }
}
