import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Logging
import NIOCore
import ShareKit

/// How a request authenticates.
enum RequestAuth: Sendable {
    /// `ckAPIToken` only (the emulator's sign-in).
    case apiTokenOnly
    /// `ckAPIToken` and the web auth token of this user (nil: the `cloudkit:` signed-in user).
    case user(UserRecordName?)
    /// Server-to-server signature.
    case signed
}

/// Sends one HTTP request to a Web Services endpoint: the query's tokens, the server-to-server signature,
/// retries of `THROTTLED`, `TRY_AGAIN_LATER` and 503 within the retry policy, and of connections the
/// service refused, for at most `reachTimeout` seconds. Tokens never appear in what it logs or answers.
struct WebServicesTransport: Sendable {
    let endpoint: WebServicesEndpoint
    let retryPolicy: RetryPolicy
    let httpClient: HTTPClient
    let timeout: TimeAmount
    let reachTimeout: Double
    let counter: RequestCounter
    let logger: Logger

    var displayName: String { endpoint.description }

    /// One request with retries of `THROTTLED`, `TRY_AGAIN_LATER` and 503, and of connections the service
    /// refused or did not answer, for at most `reachTimeout` seconds.
    func attempt(path: String, body: Data?, auth: RequestAuth, token: String?) async throws -> Reply {
        var attemptNumber = 1
        var token = token
        let started = ContinuousClock.now
        var connectAttempts = 0
        while true {
            let reply: Reply
            do {
                reply = try await execute(path: path, body: body, auth: auth, token: token)
            } catch let failure as ConnectionFailure {
                // Nothing reached the service, so sending again cannot apply anything twice.
                connectAttempts += 1
                let elapsed = Self.seconds(since: started)
                let wait = min(2, 0.25 * Double(1 << min(connectAttempts - 1, 8)))
                guard elapsed + wait < reachTimeout else {
                    throw ShareError(
                        .tryAgainLater,
                        "cannot reach \(displayName) (\(path)): \(failure.reason); tried \(connectAttempts) "
                            + "time\(connectAttempts == 1 ? "" : "s") in \(String(format: "%.1f", elapsed)) s. Check that "
                            + (endpoint.kind == .emulator
                                ? "`sharelane serve` is running at that address" : "the service is reachable")
                            + ", or give it longer with --timeout")
                }
                // The final error tells the story; each retry is a debug line.
                logger.debug(
                    "cannot reach the service; retrying",
                    metadata: ["path": "\(path)", "attempt": "\(connectAttempts + 1)", "wait": "\(wait)s"])
                try await Task.sleep(for: .seconds(wait))
                continue
            }
            if let next = reply.nextToken { token = next }
            guard reply.isRetryable,
                let wait = retryPolicy.nextWait(afterAttempt: attemptNumber, retryAfter: reply.retryAfter)
            else { return reply }
            logger.notice(
                "CloudKit asked to wait; retrying",
                metadata: [
                    "path": "\(path)", "status": "\(reply.status)", "attempt": "\(attemptNumber + 1)",
                    "wait": "\(wait)s",
                ])
            try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
            attemptNumber += 1
        }
    }

    private func execute(path: String, body: Data?, auth: RequestAuth, token: String?) async throws -> Reply {
        var query: [(String, String)] = []
        if case .signed = auth {
        } else if let apiToken = endpoint.apiToken {
            query.append((WireSpelling.apiTokenParameter, apiToken))
        }
        if let token { query.append((WireSpelling.webAuthTokenParameter, token)) }
        let queryString = query.map { "\($0.0)=\(Self.percentEncoded($0.1))" }.joined(separator: "&")
        var request = HTTPClientRequest(url: endpoint.baseURL + path + (queryString.isEmpty ? "" : "?" + queryString))
        request.method = body == nil ? .GET : .POST
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        if case .signed = auth, let signer = endpoint.signer {
            do {
                for header in try signer.headers(date: Date(), body: body ?? Data(), subpath: path) {
                    request.headers.add(name: header.name, value: header.value)
                }
            } catch {
                throw ShareError(.authenticationFailed, "cannot sign the request for \(path) with \(signer)")
            }
        }
        counter.increment()
        let started = Date()
        let response: HTTPClientResponse
        let data: Data
        do {
            response = try await httpClient.execute(request, timeout: timeout)
        } catch {
            if let failure = ConnectionFailure(error) { throw failure }
            throw ShareError(
                .tryAgainLater,
                "cannot reach \(displayName) (\(path)): \(error); check that the service is running and reachable"
                    + (endpoint.kind == .emulator ? " (`sharelane serve`)" : ""))
        }
        do {
            let buffer = try await response.body.collect(upTo: 256 << 20)
            data = Data(buffer.readableBytesView)
        } catch {
            throw ShareError(
                .tryAgainLater,
                "cannot reach \(displayName) (\(path)): \(error); check that the service is running and reachable"
                    + (endpoint.kind == .emulator ? " (`sharelane serve`)" : ""))
        }
        let status = Int(response.status.code)
        logger.debug(
            "\(request.method.rawValue) \(path) → \(status)",
            metadata: ["ms": "\(Int(Date().timeIntervalSince(started) * 1000))"])
        let nextToken = response.headers.first(name: WireSpelling.webAuthTokenHeader).flatMap { $0.isEmpty ? nil : $0 }
        // A server that reflects the request (an error quoting the URL) must not hand our tokens to the terminal.
        let sent = [endpoint.apiToken, token].compactMap { $0 }
        return Reply(
            path: path, status: status, data: Self.masking(sent, in: data), nextToken: nextToken, service: displayName)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `data` with every token of `secrets` masked (`Credentials.masking`), untouched when none occurs in it.
    static func masking(_ secrets: [String], in data: Data) -> Data {
        let present = secrets.contains { secret in
            secret.count >= 4 && Credentials.forms(of: secret).contains { contains(Array($0.utf8), in: data) }
        }
        guard present else { return data }
        return Data(Credentials.masking(secrets, in: String(decoding: data, as: UTF8.self)).utf8)
    }

    /// Whether `needle` occurs in `data`: `memchr` to each candidate first byte and `memcmp` there, not
    /// `Data.range(of:)`, whose search was 8% of an apply's time over `http:` (every answer is searched for
    /// the tokens its request carried).
    static func contains(_ needle: [UInt8], in data: Data) -> Bool {
        guard let first = needle.first else { return true }
        return data.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress, let pattern = needle.baseAddress, haystack.count >= needle.count
                else { return false }
                let last = haystack.count - needle.count  // the last offset a match can start at
                var offset = 0
                while offset <= last {
                    guard let found = memchr(base + offset, Int32(first), last - offset + 1) else { return false }
                    offset = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(base + offset, pattern, needle.count) == 0 { return true }
                    offset += 1
                }
                return false
            }
        }
    }

    /// Percent-encodes a query value, `+`, `/` and `=` included.
    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// One HTTP answer, before decoding.
struct Reply: Sendable {
    var path: String
    var status: Int
    var data: Data
    var nextToken: String?
    var service: String

    var wireError: WireError? {
        guard !(200..<300).contains(status) else { return nil }
        return try? JSONDecoder().decode(WireError.self, from: data)
    }

    var retryAfter: Double? { wireError?.retryAfter }

    var isRetryable: Bool {
        RetryPolicy.isRetryable(
            status: status, code: wireError.flatMap { ServerErrorCode(rawValue: $0.serverErrorCode) })
    }

    /// The body as `T`, or the error it carries as a `ShareError`.
    func decoded<T: Decodable>() throws -> T {
        if !(200..<300).contains(status) {
            if let wireError { throw wireError.shareError(subject: nil) }
            let code = WireSpelling.code(httpStatus: status)
            let text = String(decoding: data.prefix(300), as: UTF8.self)
            throw ShareError(code, "\(service) answered HTTP \(status) to \(path): \(text)")
        }
        do {
            return try WireCoding.decode(T.self, from: data)
        } catch {
            throw ShareError(
                .internalError, "\(service) answered \(path) with JSON sharelane cannot read: \(error)")
        }
    }
}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}

/// A connection the service refused or never answered: nothing of the request reached it, so it may be sent
/// again. Other transport errors (a connection reset mid-answer) may have reached it, and are not retried.
struct ConnectionFailure: Error {
    var reason: String

    init?(_ error: any Error) {
        if let io = error as? IOError, [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL].contains(io.errnoCode) {
            reason = "connection refused or unreachable (\(io))"
        } else if let client = error as? HTTPClientError, client == .connectTimeout {
            reason = "no answer to the connection within 2 s"
        } else if let channel = error as? ChannelError, case .connectTimeout = channel {
            reason = "no answer to the connection within 2 s"
        } else if String(describing: type(of: error)) == "NIOConnectionError" {
            // NIOPosix's error for a connection that could not be made to any address (DNS included).
            reason = "\(error)"
        } else {
            return nil
        }
    }
}
