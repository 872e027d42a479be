import Foundation
import Hummingbird
import ShareKit

/// The request context of `sharelane serve`: the user a request acts as, once `AuthenticationMiddleware`
/// redeemed its web auth token.
struct EmulatorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Shared by every copy of the context a request passes through, so that the log line written on the way
    /// out names the user that authentication found on the way in.
    let caller = Caller()

    /// The address and port the request's connection reached on this machine (`127.0.0.1:8420`), from the
    /// socket, never from the request's `Host` header; nil where no socket is behind the request.
    let localAddress: String?

    init(source: Source) {
        coreContext = .init(source: source)
        localAddress = source.channel.localAddress.flatMap { address in
            guard let ip = address.ipAddress, let port = address.port else { return nil }
            return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        }
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
    final class Caller: @unchecked Sendable {
        private let lock = NSLock()
        private var value: UserRecordName?

        var user: UserRecordName? {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }
}
