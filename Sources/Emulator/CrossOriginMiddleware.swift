import CloudKitWire
import HTTPTypes
import Hummingbird

/// Cross-origin requests (CORS), as Apple's service answers CloudKit JS in a browser: a web app on
/// `http://localhost:5173` calls `serve` on `:8420`, so every answer to an allowed origin names that origin
/// in `Access-Control-Allow-Origin` and exposes `X-Apple-CloudKit-Web-Auth-Token` (CloudKit JS reads the
/// next token from it), and a preflight `OPTIONS` of any path is answered here, before the routes.
///
/// Allowed: loopback origins, those `serve --allow-origin` names (`EmulatorConfiguration.allowsOrigin`), and
/// the emulator's own (a console page posting its form). Hummingbird's `CORSMiddleware` takes a fixed list of
/// origins; loopback origins come on any port, so the check is this type's.
///
/// A request of any other origin is refused here with `403`, whatever its method and content type, before
/// anything runs: withholding the answer is not enough, since a page may send a `no-cors` `text/plain` POST
/// (no preflight) that would change the store without reading the answer. A request without `Origin` (curl,
/// Node, sharelane itself) is no page's, and passes.
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
        let given = request.headers[values: .origin]
        guard !given.isEmpty else { return try await next(request, context) }
        guard given.count == 1, let origin = allowedOrigin(given[0], request: request) else {
            return Self.refusal(given.joined(separator: ", "))
        }
        if request.method == .options {
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
            // Chromium asks before a page of a public address calls one on this machine (Private Network
            // Access); an allowed origin may.
            if let asks = HTTPField.Name("Access-Control-Request-Private-Network"), request.headers[asks] == "true",
                let answer = HTTPField.Name("Access-Control-Allow-Private-Network")
            {
                headers[answer] = "true"
            }
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
        add(origin, to: &response.headers)
        return response
    }

    /// The origin as a browser writes it, when a page of it may call the emulator; nil otherwise. Text that no
    /// browser writes (a path, upper case, spaces, a default port) is no allowed origin, so an answer never
    /// repeats it.
    private func allowedOrigin(_ text: String, request: Request) -> String? {
        guard let origin = EmulatorConfiguration.origin(of: text), origin == text else { return nil }
        if configuration.allowsOrigin(origin) { return origin }
        // The emulator's own pages (the console on an --allow-host name): the Host middleware checked the name.
        if let authority = request.head.authority, EmulatorConfiguration.origin(of: "http://\(authority)") == origin {
            return origin
        }
        return nil
    }

    static func refusal(_ origin: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.vary] = "Origin"
        headers[.cacheControl] = "no-store"
        if let nosniff = HTTPField.Name("X-Content-Type-Options") { headers[nosniff] = "nosniff" }
        let text: String
        if let shown = EmulatorConfiguration.origin(of: origin), shown == origin {
            text =
                "Pages of the origin \(origin) may not call this emulator: nothing was done. Start "
                + "`sharelane serve --allow-origin \(shown)` to allow them (loopback origins are allowed).\n"
        } else {
            text =
                "The request's Origin is not one origin as a browser writes it (scheme://host[:port], lower case, "
                + "no path, no default port): nothing was done.\n"
        }
        return Response(
            status: .forbidden, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    private func add(_ origin: String, to headers: inout HTTPFields) {
        headers[.accessControlAllowOrigin] = origin
        headers[.accessControlExposeHeaders] = WireSpelling.webAuthTokenHeader
        headers[.vary] = "Origin"
    }
}
