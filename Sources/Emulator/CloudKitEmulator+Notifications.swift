import CloudKitWire
import Hummingbird

extension CloudKitEmulator {
    static func isTokenOperation(_ operation: WireOperation) -> Bool {
        operation == .tokensCreate || operation == .tokensRegister
    }

    /// `tokens/create|register` on the reference's database path and on the live service's
    /// `/device/1/{container}/{environment}/` path (both with the user's web auth token), and the webcourier
    /// long-poll (its token is its only credential, as Apple's webcourier URL).
    func registerNotificationRoutes(
        _ router: Router<EmulatorRequestContext>, database: RouterGroup<EmulatorRequestContext>
    ) {
        let service = self.service
        let device = router.group(RouterPath("\(WireSpelling.devicePathPrefix)/:container/:environment"))
            .add(middleware: AuthenticationMiddleware(service: service, requiresWebAuthToken: true))
        for operation in [WireOperation.tokensCreate, .tokensRegister] {
            database.post(RouterPath(operation.path)) { request, context in
                try await service.tokens(operation, request, context: context)
            }
            device.post(RouterPath(operation.path)) { request, context in
                try await service.tokens(operation, request, context: context)
            }
        }
        router.get(RouterPath(WireSpelling.webcourierPath)) { request, _ in try await service.webcourier(request) }
    }
}
