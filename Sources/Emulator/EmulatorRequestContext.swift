import Foundation
import Synchronization
import Hummingbird
import NIOCore
import ShareKit

/// The request context of `sharelane serve`: the user a request acts as, once `AuthenticationMiddleware`
/// redeemed its web auth token, and the connection it came on.
struct EmulatorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Shared by every copy of the context a request passes through, so that the log line written on the way
    /// out names the user that authentication found on the way in.
    let caller = Caller()
    /// What the rehearsed network did to the request (`NetworkFaultMiddleware`), for its log line; shared by
    /// every copy, as `caller` is.
    let network = NetworkNote()

    /// The address and port the request's connection reached on this machine (`127.0.0.1:8420`), from the
    /// socket, never from the request's `Host` header; nil where no socket is behind the request.
    let localAddress: String?

    /// The request's connection: closed without an answer by a reset or a lost answer.
    private let channel: any Channel

    init(source: Source) {
        coreContext = .init(source: source)
        channel = source.channel
        localAddress = source.channel.localAddress.flatMap { address in
            guard let ip = address.ipAddress, let port = address.port else { return nil }
            return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        }
    }

    /// The IP address the request's connection came from, from the socket; nil where none is known.
    var remoteIPAddress: String? { channel.remoteAddress?.ipAddress }

    /// Closes the request's connection and returns once it is closed, so that no answer written after it
    /// reaches the client: the client reads a closed connection.
    func closeConnection() async {
        try? await channel.close().get()
    }

    /// The authenticated user of a database request.
    /// - Throws: `AUTHENTICATION_REQUIRED` when the route runs without `AuthenticationMiddleware`.
    func user() throws -> UserRecordName {
        guard let user = caller.user else {
            throw ShareError(.authenticationRequired, "this request needs a ckWebAuthToken")
        }
        return user
    }

    /// Who a request acts as.
    final class Caller: Sendable {
        private let value = Mutex<UserRecordName?>(nil)

        var user: UserRecordName? {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }

    /// The fault a request met on the rehearsed network (`serve --faults`, `--throttle`); nil when no network
    /// conditions were in force for it.
    final class NetworkNote: Sendable {
        /// What the log line's `fault=` says.
        enum Met: String, Sendable {
            /// Conditions were in force (a wait, perhaps), and no fault met the request.
            case untouched = "none"
            case unavailable
            case reset
            case lostAnswer = "lost-answer"
            case throttled
        }

        private let value = Mutex<Met?>(nil)

        var met: Met? {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }
}
