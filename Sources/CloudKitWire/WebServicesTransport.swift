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

/// Sends one HTTP request to a Web Services endpoint: the query's tokens, the server-to-server signature, and
/// the retries of `RetryPolicy`: `THROTTLED`, `TRY_AGAIN_LATER`, 429 and 503 after their `retryAfter`, a
/// connection lost after the request went out (the answer says it was sent again, `mayHaveLandedBefore`), and
/// connections the service refused, for at most `reachTimeout` seconds. Each wait is logged at `info` and told
/// to the task's `StoreRetryListener`; at most `slots.limit` exchanges are on the wire at once. Tokens never
/// appear in what it logs or answers.
struct WebServicesTransport: Sendable {
    let endpoint: WebServicesEndpoint
    let retryPolicy: RetryPolicy
    let httpClient: HTTPClient
    let timeout: TimeAmount
    let reachTimeout: Double
    let counter: RequestCounter
    let logger: Logger
    /// The requests of this store on the wire at once (`--parallelism`).
    var slots = RequestSlots(limit: WebServicesStore.defaultParallelism)
    /// What retries wait on.
    var clock = RetryClock.system

    var displayName: String { endpoint.description }

    /// One request, sent again as `RetryPolicy` says.
    func attempt(path: String, body: Data?, auth: RequestAuth, token: String?) async throws -> Reply {
        try await retrying(path: path, token: token) { token in
            try await execute(path: path, body: body, auth: auth, token: token)
        }
    }

    /// One exchange outside the Web Services paths (an asset's bytes), retried as `attempt` retries, except
    /// that a connection lost after the request went out is thrown (`LostConnection`) when `resendAfterLoss`
    /// is false: an upload URL serves once, so the caller asks for another.
    func exchange(_ request: HTTPClientRequest, what: String, resendAfterLoss: Bool, timeout: TimeAmount) async throws
        -> Reply
    {
        try await retrying(path: what, token: nil, resendAfterLoss: resendAfterLoss) { _ in
            try await self.slots.holding {
                self.counter.increment()
                do {
                    let response = try await self.httpClient.execute(request, timeout: timeout)
                    let buffer = try await response.body.collect(upTo: CloudKitLimits.bodyBytes)
                    return Reply(
                        path: what, status: Int(response.status.code), data: Data(buffer.readableBytesView),
                        nextToken: nil, service: self.displayName)
                } catch {
                    throw Self.classified(error, path: what, service: self.displayName, kind: self.endpoint.kind)
                }
            }
        }
    }

    /// Runs `once` (one exchange, with the newest token) until it answers something other than a retryable
    /// refusal, or the request's retry budget (`RetryBudget.current`, shared with the loops of the call that
    /// sends it) or the reach timeout says to stop.
    private func retrying(
        path: String, token: String?, resendAfterLoss: Bool = true, _ once: (String?) async throws -> Reply
    ) async throws -> Reply {
        try await RetryBudget.sharing(retryPolicy) { budget in
            try await retrying(path: path, token: token, resendAfterLoss: resendAfterLoss, budget: budget, once)
        }
    }

    private func retrying(
        path: String, token: String?, resendAfterLoss: Bool, budget: RetryBudget,
        _ once: (String?) async throws -> Reply
    ) async throws -> Reply {
        var lostHere = 0
        var token = token
        var lostBefore = false
        // When connections began to fail, for the reach timeout: reset by every exchange that got through.
        var unreachableSince: ContinuousClock.Instant?
        var connectAttempts = 0
        while true {
            let reply: Reply
            do {
                reply = try await once(token)
            } catch let failure as ConnectionFailure {
                if failure.unknownHost {
                    let host = URL(string: endpoint.baseURL)?.host ?? endpoint.baseURL
                    throw UnknownHost(
                        description: "cannot reach \(displayName): the name \(host) does not resolve (DNS); check "
                            + "the store's address (--store, CLOUDKIT_BASE_URL) and this machine's network")
                }
                // Nothing reached the service, so sending again cannot apply anything twice.
                let since = unreachableSince ?? ContinuousClock.now
                unreachableSince = since
                connectAttempts += 1
                let elapsed = Self.seconds(since: since)
                let wait = RetryPolicy.reachWait(afterAttempt: connectAttempts, draw: Double.random(in: 0..<1))
                guard elapsed + wait < reachTimeout else {
                    throw ShareError(
                        .tryAgainLater,
                        "cannot reach \(displayName) (\(path)): \(failure.reason); tried \(connectAttempts) "
                            + "time\(connectAttempts == 1 ? "" : "s") in \(String(format: "%.1f", elapsed)) s. Check that "
                            + (endpoint.kind == .emulator
                                ? "`sharelane serve` is running at that address" : "the service is reachable")
                            + ", or give it longer with --timeout")
                }
                announce(.unreachable, wait: wait, attempt: connectAttempts + 1, path: path)
                // On the system's clock: the reach timeout is the time a dead service may cost.
                try await RetryClock.system.sleep(wait)
                continue
            } catch let lost as LostConnection {
                unreachableSince = nil
                guard resendAfterLoss else { throw lost }
                lostHere += 1
                guard case (let wait, let attempt)? = budget.spend(retryAfter: nil) else {
                    throw ShareError(
                        .tryAgainLater,
                        "lost the connection to \(displayName) (\(path)) after sending the request, "
                            + "\(lostHere) time\(lostHere == 1 ? "" : "s") (\(lost.reason)); it may have been "
                            + "applied. Check the network; running the command again finishes the job (a plan shows "
                            + "what is left)")
                }
                lostBefore = true
                announce(.connectionLost, wait: wait, attempt: attempt, path: path)
                try await clock.sleep(wait)
                continue
            }
            unreachableSince = nil
            if let next = reply.nextToken { token = next }
            var answer = reply
            answer.mayHaveLandedBefore = lostBefore
            guard reply.isRetryable else { return answer }
            let code = reply.wireError.flatMap { WireSpelling.errorCode($0.serverErrorCode) }
            guard case (let wait, let attempt)? = budget.spend(retryAfter: reply.retryAfter) else {
                answer.gaveUp = budget.gaveUp(nextRetryAfter: reply.retryAfter)
                return answer
            }
            announce(
                RetryPolicy.reason(status: reply.status, code: code), wait: wait, attempt: attempt, path: path,
                status: reply.status)
            try await clock.sleep(wait)
        }
    }

    /// Logs a wait at `info` and tells the task's observer (an apply's progress line).
    func announce(
        _ reason: StoreRetry.Reason, wait: Double, attempt: Int, path: String, status: Int? = nil
    ) {
        let notice = StoreRetry(reason: reason, seconds: wait, attempt: attempt, operation: Self.operation(of: path))
        var metadata: Logger.Metadata = [
            "path": "\(path)", "reason": "\(reason.rawValue)", "attempt": "\(attempt)",
            "wait": "\(String(format: "%.2f", wait))s",
        ]
        if let status { metadata["status"] = "\(status)" }
        logger.info("\(notice); sending the request again", metadata: metadata)
        notice.tell()
    }

    /// The operation a path names, for people: `records/modify` of `/database/1/…/private/records/modify`.
    static func operation(of path: String) -> String {
        let parts = path.split(separator: "/")
        guard parts.count >= 2, path.hasPrefix(WireSpelling.databasePathPrefix) || path.hasPrefix("/device/")
        else { return path }
        return parts.suffix(2).joined(separator: "/")
    }

    /// What an error of AsyncHTTPClient means for a retry: a connection never made, one lost after the
    /// request went out, or something else (thrown as it is, as a `ShareError`).
    static func classified(_ error: any Error, path: String, service: String, kind: WebServicesEndpoint.Kind)
        -> any Error
    {
        if let failure = ConnectionFailure(error) { return failure }
        if let lost = LostConnection(error) { return lost }
        if error is CancellationError { return error }
        return ShareError(
            .tryAgainLater,
            "cannot reach \(service) (\(path)): \(error); check that the service is running and reachable"
                + (kind == .emulator ? " (`sharelane serve`)" : ""))
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
        let started = Date()
        let (status, nextToken, data) = try await slots.holding { () async throws -> (Int, String?, Data) in
            counter.increment()
            do {
                let response = try await httpClient.execute(request, timeout: timeout)
                let buffer = try await response.body.collect(upTo: 256 << 20)
                let next = response.headers.first(name: WireSpelling.webAuthTokenHeader).flatMap {
                    $0.isEmpty ? nil : $0
                }
                return (Int(response.status.code), next, Data(buffer.readableBytesView))
            } catch {
                throw Self.classified(error, path: path, service: displayName, kind: endpoint.kind)
            }
        }
        logger.debug(
            "\(request.method.rawValue) \(path) → \(status)",
            metadata: ["ms": "\(Int(Date().timeIntervalSince(started) * 1000))"])
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
            guard secret.count >= 4 else { return false }
            let forms = Credentials.forms(of: secret).map { Array($0.utf8) }
            // The forms differ only from the first character one of them escapes: an answer without the part
            // they share has none of them, found in one pass over it rather than one a form.
            let shared = forms.dropFirst().reduce(forms.first ?? []) { shared, form in
                Array(zip(shared, form).prefix { $0 == $1 }.map(\.0))
            }
            if shared.count >= 4, !contains(shared, in: data) { return false }
            return forms.contains { contains($0, in: data) }
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
    /// An earlier attempt of this request lost its connection after it went out: it may have been applied
    /// (a write that now meets `EXISTS` or `CONFLICT` reads back what it sent).
    var mayHaveLandedBefore = false
    /// How the retries ended when this answer still asks for another (`gave up after 8 attempts …`).
    var gaveUp: String?

    var wireError: WireError? {
        guard !(200..<300).contains(status) else { return nil }
        return try? JSONDecoder().decode(WireError.self, from: data)
    }

    var retryAfter: Double? { wireError?.retryAfter }

    var isRetryable: Bool {
        RetryPolicy.isRetryable(
            status: status, code: wireError.flatMap { WireSpelling.errorCode($0.serverErrorCode) })
    }

    /// The body as `T`, or the error it carries as a `ShareError`.
    func decoded<T: Decodable>() throws -> T {
        if !(200..<300).contains(status) {
            let note = gaveUp.map { "; \($0)" } ?? ""
            if let wireError {
                var error = wireError.shareError(subject: nil)
                error.reason += note
                throw error
            }
            let code = WireSpelling.code(httpStatus: status)
            let text = String(decoding: data.prefix(300), as: UTF8.self)
            throw ShareError(code, "\(service) answered HTTP \(status) to \(path): \(text)\(note)")
        }
        do {
            // The live service names the caller's own zones by their real owner; the stores name them with the
            // placeholder, so an answer of the private or public database is read that way. A share's metadata
            // (resolve, accept) names another owner's zone, read as written.
            let ownZones =
                (path.contains("/private/") || path.contains("/public/")) && !path.contains("/records/resolve")
                && !path.contains("/records/accept")
            return try WireZoneID.$readingOwnZones.withValue(ownZones) { try WireCoding.decode(T.self, from: data) }
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
