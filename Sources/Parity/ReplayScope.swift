import Foundation

/// What a replay may send: the requests of CloudKit Web Services, as paths on the one store it was given.
///
/// A recording is a file anyone can edit, and a replay sends it with real credentials (the API token, the
/// users' web auth tokens). So a request goes out only when its method and path are one of the service's
/// (`routes`), its path is a path and not a URL, and it names no host: a case file cannot send those
/// credentials to another server, nor reach serve's own endpoints, its console or its sign-in form.
public struct ReplayScope: Sendable {
    /// One request of the service: a method and a path pattern, `*` standing for one part of the path.
    public struct Route: Sendable, Hashable {
        public var method: String
        public var parts: [String]

        /// - Parameter pattern: `/database/1/*/*/private/records/modify`.
        public init(method: String, pattern: String) {
            self.method = method.uppercased()
            parts = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        }

        func matches(method: String, parts: [Substring]) -> Bool {
            guard method == self.method, parts.count == self.parts.count else { return false }
            return zip(self.parts, parts).allSatisfy { $0 == "*" || $0 == $1 }
        }
    }

    public let routes: [Route]

    public init(routes: [Route]) {
        self.routes = routes
    }

    /// Headers that decide where a request goes or how its bytes travel: the replay's to set, never a
    /// recording's (`sharelane record` writes none of them).
    static let steeringHeaders: Set<String> = [
        "host", "forwarded", "x-real-ip", "content-length", "transfer-encoding", "connection", "keep-alive", "te",
        "upgrade", "expect", "proxy-connection",
    ]

    /// Why a request is not sent, in words for the report; nil when it may be.
    public func refusal(of request: RecordedExchange.Request) -> String? {
        let path = request.path
        if !path.hasPrefix("/") || path.hasPrefix("//") || path.contains("://") {
            return "its path is the URL \(path), not a path: a replay sends only to the store it was given"
        }
        for name in request.headers.keys.sorted() {
            if Self.steeringHeaders.contains(name) || name.hasPrefix("x-forwarded-") {
                let value = request.headers[name] ?? ""
                return "it sets the \(name) header (\(value)): where a request goes and how is the replay's to decide"
            }
            if Self.hasControlCharacter(name) || Self.hasControlCharacter(request.headers[name] ?? "") {
                return "its \(name) header holds a line break or another control character"
            }
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for part in parts {
            let decoded = part.removingPercentEncoding ?? String(part)
            if part.isEmpty || decoded == "." || decoded == ".." || decoded.contains("/") || decoded.contains("\\")
                || part.contains(where: { "?#\\".contains($0) || $0.isWhitespace })
                || Self.hasControlCharacter(decoded)
            {
                return "its path \(path) has a part that is not a plain name (\"\(part)\")"
            }
        }
        let method = request.method.uppercased()
        if routes.contains(where: { $0.matches(method: method, parts: Array(parts)) }) { return nil }
        if parts.first == "_sharelane" {
            return "\(path) is one of sharelane serve's own endpoints, which act on the whole server: a replay "
                + "sends only CloudKit Web Services requests"
        }
        return "\(request.method) \(path) is not a CloudKit Web Services request: a replay sends only the "
            + "service's operations, sign-ins, assets' bytes and the notification poll"
    }

    private static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}
