import CloudKitWire
import HTTPTypes
import Hummingbird

/// Cross-origin requests (CORS), as Apple's service answers CloudKit JS in a browser: a web app on
/// `http://localhost:5173` calls `serve` on `:8420`, so every answer to an allowed origin names that origin
/// in `Access-Control-Allow-Origin` and exposes `X-Apple-CloudKit-Web-Auth-Token` (CloudKit JS reads the
/// next token from it), and a preflight `OPTIONS` of any path is answered here, before the routes.
///
/// Allowed: loopback origins, and those `serve --allow-origin` names (`EmulatorConfiguration.allowsOrigin`).
/// Hummingbird's `CORSMiddleware` takes a fixed list of origins; loopback origins come on any port, so the
/// check is this type's. A request of another origin is answered without these headers (a browser then
/// keeps the answer from the page), and its preflight with `403`, saying how to allow it.
struct CrossOriginMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let configuration: EmulatorConfiguration

    /// The request headers a page may send: CloudKit JS's, and the server-to-server headers.
    static let allowedHeaders = [
        "Content-Type", "Accept", WireSpelling.keyIDHeader, WireSpelling.dateHeader, WireSpelling.signatureHeader,
    ]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        let allowed = configuration.allowsOrigin(origin)
        if request.method == .options {
            guard allowed else {
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; charset=utf-8"
                headers[.vary] = "Origin"
                return Response(
                    status: .forbidden, headers: headers,
                    body: ResponseBody(
                        byteBuffer: ByteBuffer(
                            string:
                                "The origin \(origin) may not call this emulator from a browser; start "
                                + "`sharelane serve --allow-origin \(origin)` (loopback origins are allowed).\n")))
            }
            var headers = HTTPFields()
            add(origin, to: &headers)
            headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
            // What the page asked for, where it is among the allowed headers.
            let asked = request.headers[.accessControlRequestHeaders] ?? ""
            let allowedLowercased = Set(Self.allowedHeaders.map { $0.lowercased() })
            let extra = asked.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                allowedLowercased.contains($0.lowercased())
            }
            headers[.accessControlAllowHeaders] = (Self.allowedHeaders + extra).joined(separator: ", ")
            headers[.accessControlMaxAge] = "600"
            return Response(status: .noContent, headers: headers)
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // A refusal made into an answer past this middleware would reach the page without these headers,
            // and the page could not read why it was refused.
            response = try error.response(from: request, context: context)
        }
        if allowed { add(origin, to: &response.headers) } else { response.headers[.vary] = "Origin" }
        return response
    }

    private func add(_ origin: String, to headers: inout HTTPFields) {
        headers[.accessControlAllowOrigin] = origin
        headers[.accessControlExposeHeaders] = WireSpelling.webAuthTokenHeader
        headers[.vary] = "Origin"
    }
}
