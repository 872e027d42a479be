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

    init(source: Source) {
        coreContext = .init(source: source)
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
