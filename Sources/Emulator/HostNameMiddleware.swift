import HTTPTypes
import Hummingbird

/// Refuses a request whose `Host` header names another server than this one (`EmulatorConfiguration
/// .allowsHost`): `421 Misdirected Request`, saying which option allows the name.
///
/// The defence against DNS rebinding: a page at `http://rebind.example:8420` whose name an attacker points
/// at 127.0.0.1 is same-origin with the emulator, so the browser applies no CORS, and a page that knows an
/// API token (every CloudKit JS app's page source holds one) could sign users in and read their data. The
/// browser still sends the name the page was loaded from, and that is what is checked, before anything else
/// runs. A request without a `Host` header (HTTP/1.0) came from no browser, and passes.
struct HostNameMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let configuration: EmulatorConfiguration

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // A second Host header stays among the fields (the first became the authority): two names are no name.
        let extra = Self.hostField.map { request.headers[values: $0] } ?? []
        guard let authority = request.head.authority else {
            return extra.isEmpty ? try await next(request, context) : Self.refusal(extra.joined(separator: ", "))
        }
        guard extra.isEmpty, configuration.allowsHost(authority, localAddress: context.localAddress) else {
            return Self.refusal(([authority] + extra).joined(separator: ", "))
        }
        return try await next(request, context)
    }

    /// `Host` by its name: HTTPTypes keeps the name for HTTP/1's conversion alone.
    private static let hostField = HTTPField.Name("Host")

    static func refusal(_ given: String) -> Response {
        let name = EmulatorConfiguration.hostName(of: given) ?? given
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if let nosniff = HTTPField.Name("X-Content-Type-Options") { headers[nosniff] = "nosniff" }
        let text =
            "sharelane serve does not answer to the host name in this request (Host: \(given)): a page of a "
            + "name that points at this machine could be a DNS rebinding attack. It answers to 127.0.0.1, "
            + "localhost, [::1] and its --host; to reach it by this name, start `sharelane serve --allow-host "
            + "\(name)`.\n"
        return Response(
            status: .misdirectedRequest, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
