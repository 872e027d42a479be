import AsyncHTTPClient
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import NIOCore

/// A connection the service refused or never answered: nothing of the request reached it, so it may be sent
/// again, however it writes (`WebServicesTransport` tries again within the reach timeout).
struct ConnectionFailure: Error {
    var reason: String
    /// Whether the service's name did not resolve at all (no address, only DNS errors): sending again does
    /// not find it, so it is said at once rather than retried until the reach timeout.
    var unknownHost = false

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
            unknownHost = reason.contains("UnknownHost")
        } else {
            return nil
        }
    }
}

/// The service's name does not resolve: a wrong address or no network, which no retry mends. Not one of
/// CloudKit's error codes (the service never answered), so it is said as it is.
public struct UnknownHost: Error, CustomStringConvertible {
    public var description: String
}

/// A connection that closed, or went silent, after the request went out and before its answer came: the
/// service may have applied the request or not (a reset before it was read, an answer lost after it was
/// applied: nothing tells them apart). `WebServicesTransport` sends it again within the retry policy and marks
/// the answer (`Reply.mayHaveLandedBefore`), so that a write settles what its earlier attempt did.
struct LostConnection: Error {
    var reason: String

    init?(_ error: any Error) {
        if let client = error as? HTTPClientError {
            let lost: [HTTPClientError] = [
                .remoteConnectionClosed, .readTimeout, .writeTimeout, .deadlineExceeded, .uncleanShutdown,
                .getConnectionFromPoolTimeout,
            ]
            guard lost.contains(client) else { return nil }
            reason = client == .remoteConnectionClosed ? "the connection closed before the answer came" : "\(client)"
        } else if error is IOError || error is ChannelError {
            reason = "the connection failed before the answer came (\(error))"
        } else if String(describing: type(of: error)).hasPrefix("NIOSSL") {
            reason = "the TLS connection closed before the answer came (\(error))"
        } else {
            return nil
        }
    }
}

/// At most a number of HTTP exchanges of one store under way at once (`apply --parallelism`): every request
/// takes a slot for its one exchange and gives it back before it waits to retry, so a bound of N is N
/// requests on the wire, however many calls wait.
actor RequestSlots {
    let limit: Int
    private var inUse = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// The most slots ever in use at once, for tests and the bench.
    private(set) var peak = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    func take() async {
        if inUse < limit {
            inUse += 1
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
        peak = max(peak, inUse)
    }

    func give() {
        if waiting.isEmpty {
            inUse -= 1
        } else {
            // The slot passes to the first waiter: `inUse` stays.
            waiting.removeFirst().resume()
        }
    }

    /// Runs `body` holding a slot.
    nonisolated func holding<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await take()
        do {
            let value = try await body()
            await give()
            return value
        } catch {
            await give()
            throw error
        }
    }
}
