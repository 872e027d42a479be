import Foundation

/// One request and its answer as a case file holds them: credentials already masked.
///
/// A recording is a folder of these, one file an exchange, named `NNNN-OPERATION.json` and replayed in the
/// order of their numbers.
public struct RecordedExchange: Sendable, Equatable {
    /// A request or answer body: JSON when it is JSON, otherwise text, otherwise bytes (an asset's).
    public enum Body: Sendable, Equatable {
        case none
        case json(JSONValue)
        case text(String)
        case bytes(Data)

        /// The body as the bytes on the wire.
        public var data: Data? {
            switch self {
            case .none: nil
            case .json(let value): Data(value.jsonText().utf8)
            case .text(let text): Data(text.utf8)
            case .bytes(let data): data
            }
        }

        /// The body of `data`: JSON when it parses as a JSON object or list, then UTF-8 text, then bytes.
        public init(_ data: Data?) {
            guard let data, !data.isEmpty else {
                self = .none
                return
            }
            if let first = data.first(where: { ![9, 10, 13, 32].contains($0) }),
                first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
                let value = JSONValue.parse(data)
            {
                self = .json(value)
            } else if let text = String(data: data, encoding: .utf8), !text.contains("\0") {
                self = .text(text)
            } else {
                self = .bytes(data)
            }
        }
    }

    public struct Request: Sendable, Equatable {
        public var method: String
        /// The path as sent, percent-encoded.
        public var path: String
        /// The query's parameters in order, decoded.
        public var query: [QueryItem]
        /// Header names lowercased.
        public var headers: [String: String]
        public var body: Body

        public init(method: String, path: String, query: [QueryItem], headers: [String: String], body: Body) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
        }
    }

    public struct QueryItem: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public struct Response: Sendable, Equatable {
        public var status: Int
        public var headers: [String: String]
        public var body: Body

        public init(status: Int, headers: [String: String], body: Body) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    public var request: Request
    public var response: Response
    /// Where the recording came from and how (a recording of Apple's service, one written from the reference).
    public var note: String?

    public init(request: Request, response: Response, note: String? = nil) {
        self.request = request
        self.response = response
        self.note = note
    }

    /// The operation a file name says: the path's last two parts (`records-modify`, `auth-signin`), or an
    /// asset path's first two (`assets-download`).
    public var operationName: String {
        let all = request.path.split(separator: "/")
        // An asset's bytes (`/assets/download/CHECKSUM/FILE`) are named by what they are, not by their checksum.
        let parts = (all.first == "assets" ? all.prefix(2) : all.suffix(2)).map(String.init)
        let name = parts.joined(separator: "-").filter { $0.isLetter || $0.isNumber || $0 == "-" }
        return name.isEmpty ? "root" : name
    }

    /// The query parameters of a raw query string (`a=1&b=2`), decoded; `+` stays `+`, as CloudKit's tokens
    /// hold it percent-encoded.
    public static func queryItems(_ raw: String?) -> [QueryItem] {
        guard let raw, !raw.isEmpty else { return [] }
        return raw.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return QueryItem(name: name, value: value)
        }
    }

    /// A query string of `items`, every value percent-encoded but for unreserved characters.
    public static func queryString(_ items: [QueryItem]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        return items.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }
}

// MARK: - Case files

extension RecordedExchange {
    /// The case file's JSON.
    public var fileText: String {
        var request: [String: JSONValue] = [
            "method": .string(self.request.method), "path": .string(self.request.path),
            "query": .array(self.request.query.map { .array([.string($0.name), .string($0.value)]) }),
            "headers": .object(self.request.headers.mapValues(JSONValue.string)),
        ]
        Self.put(self.request.body, in: &request)
        var response: [String: JSONValue] = [
            "status": .int(Int64(self.response.status)),
            "headers": .object(self.response.headers.mapValues(JSONValue.string)),
        ]
        Self.put(self.response.body, in: &response)
        var file: [String: JSONValue] = ["request": .object(request), "response": .object(response)]
        if let note { file["note"] = .string(note) }
        return JSONValue.object(file).jsonText(pretty: true) + "\n"
    }

    private static func put(_ body: Body, in object: inout [String: JSONValue]) {
        switch body {
        case .none: break
        case .json(let value): object["body"] = value
        case .text(let text): object["bodyText"] = .string(text)
        case .bytes(let data): object["bodyBase64"] = .string(data.base64EncodedString())
        }
    }

    /// Reads a case file.
    /// - Throws: `ParityError.damaged` naming the file, and the line and column where it is not JSON, or the
    ///   key that is missing or of another type.
    public init(fileData data: Data, file: String) throws {
        let value = try JSONValue.parse(data, file: file)
        func fail(_ reason: String) -> ParityError {
            ParityError.damaged(file: file, line: nil, column: nil, reason: reason)
        }
        guard case .object(let top) = value else {
            throw fail("a case file is a JSON object with request and response")
        }
        guard case .object(let request)? = top["request"] else { throw fail("no request object") }
        guard case .object(let response)? = top["response"] else { throw fail("no response object") }
        guard let method = request["method"]?.stringValue, !method.isEmpty else {
            throw fail("request.method is missing or not a string")
        }
        guard let path = request["path"]?.stringValue, path.hasPrefix("/") else {
            throw fail("request.path is missing or does not start with /")
        }
        var query: [QueryItem] = []
        if let items = request["query"] {
            guard case .array(let list) = items else {
                throw fail("request.query is not a list of [name, value] pairs")
            }
            for (index, item) in list.enumerated() {
                guard case .array(let pair) = item, pair.count == 2, let name = pair[0].stringValue,
                    let value = pair[1].stringValue
                else { throw fail("request.query[\(index)] is not a [name, value] pair of strings") }
                query.append(QueryItem(name: name, value: value))
            }
        }
        guard case .int(let status)? = response["status"], (100...599).contains(status) else {
            throw fail("response.status is missing or not an HTTP status (100…599)")
        }
        self.init(
            request: Request(
                method: method, path: path, query: query,
                headers: try Self.headers(request["headers"], "request", fail),
                body: try Self.body(of: request, "request", fail)),
            response: Response(
                status: Int(status), headers: try Self.headers(response["headers"], "response", fail),
                body: try Self.body(of: response, "response", fail)),
            note: top["note"]?.stringValue)
    }

    private static func headers(
        _ value: JSONValue?, _ side: String, _ fail: (String) -> ParityError
    ) throws -> [String: String] {
        guard let value else { return [:] }
        guard case .object(let object) = value else { throw fail("\(side).headers is not an object of strings") }
        var headers: [String: String] = [:]
        for (name, value) in object {
            guard let text = value.stringValue else { throw fail("\(side).headers.\(name) is not a string") }
            headers[name.lowercased()] = text
        }
        return headers
    }

    private static func body(
        of object: [String: JSONValue], _ side: String, _ fail: (String) -> ParityError
    ) throws -> Body {
        if let body = object["body"] { return .json(body) }
        if let text = object["bodyText"] {
            guard let text = text.stringValue else { throw fail("\(side).bodyText is not a string") }
            return .text(text)
        }
        if let encoded = object["bodyBase64"] {
            guard let text = encoded.stringValue, let data = Data(base64Encoded: text) else {
                throw fail("\(side).bodyBase64 is not base64 text")
            }
            return .bytes(data)
        }
        return .none
    }
}
