import Foundation
import Hummingbird
import Logging

/// The one-shot server of `sharelane login` on 127.0.0.1: the sign-in page sends the browser to
/// `http://127.0.0.1:PORT/callback?ckWebAuthToken=…`, the server answers a page saying it may be closed, and
/// hands the token over; then it stops. It never logs the token.
enum LoginCallbackServer {
    /// Starts the server on `port` (0 picks a free one), calls `ready` with the callback URL, and waits up to
    /// `timeout` seconds for the token.
    /// - Throws: `CLIFailure` when the port cannot be bound or no token arrives in time.
    static func receiveToken(port: Int, timeout: Double, ready: @escaping @Sendable (String) -> Void) async throws
        -> String
    {
        let (tokens, tokenSink) = AsyncStream<String>.makeStream()
        let router = Router()
        router.get("/callback") { request, _ -> Response in
            guard let token = request.uri.queryParameters["ckWebAuthToken"].map(String.init), !token.isEmpty else {
                return page("No token", "The sign-in came back without a ckWebAuthToken. Try `sharelane login` again.")
            }
            tokenSink.yield(token)
            return page("Signed in", "sharelane has the sign-in. You can close this window.")
        }
        let quiet = Logger(label: "sharelane.login.callback") { _ in SwiftLogNoOpLogHandler() }
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                ready("http://127.0.0.1:\(channel.localAddress?.port ?? port)/callback")
            },
            logger: quiet)
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                do {
                    try await application.run()
                } catch {
                    throw CLIFailure(
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
                throw CLIFailure(
                    "no sign-in came back within \(Int(timeout)) s; nothing was saved. Try again (longer with --wait), "
                        + "or use --paste")
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let token = result { return token }
            }
            throw CLIFailure("the sign-in callback server stopped before a token came")
        }
    }

    private static func page(_ title: String, _ text: String) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(title)</title></head>\
            <body style="font-family:system-ui,sans-serif;max-width:32em;margin:3em auto"><h1>\(title)</h1>\
            <p>\(text)</p></body></html>
            """
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
