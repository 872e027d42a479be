import Crypto
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

/// A CloudKit Web Services client as a server keeps one: a user's requests carry their web auth token, the
/// server's own requests to the public database are signed with its server-to-server key.
public struct CloudKitClient: Sendable {
    /// Who a request is sent as.
    public enum Caller: Sendable {
        case user(webAuthToken: String)
        case server(keyID: String, key: P256.Signing.PrivateKey)
    }

    /// What the service answered.
    public struct Answer: Sendable {
        public var status: Int
        public var body: Data
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The per-record answers of a `records/…` operation.
        public var records: [[String: Any]] { json["records"] as? [[String: Any]] ?? [] }
    }

    public var baseURL: String
    public var container: String
    public var environment: String
    public var apiToken: String

    public init(baseURL: String, container: String, environment: String, apiToken: String) {
        self.baseURL = baseURL
        self.container = container
        self.environment = environment
        self.apiToken = apiToken
    }

    /// POSTs `body` to `operation` of `database` (`private`, `shared` or `public`) as `caller`.
    public func post(_ database: String, _ operation: String, body: Data, as caller: Caller) async throws -> Answer {
        let path = "/database/1/\(container)/\(environment)/\(database)/\(operation)"
        guard var url = URLComponents(string: baseURL + path) else { throw URLError(.badURL) }
        var headers: [String: String] = [:]
        switch caller {
        case .user(let token):
            url.queryItems = [.init(name: "ckAPIToken", value: apiToken), .init(name: "ckWebAuthToken", value: token)]
        case .server(let keyID, let key):
            // Apple's server-to-server signature: DATE:BASE64(SHA256(BODY)):PATH, the path without a query.
            let date = ISO8601DateFormatter().string(from: Date())
            let bodyHash = Data(SHA256.hash(data: body)).base64EncodedString()
            let signature = try key.signature(for: Data("\(date):\(bodyHash):\(path)".utf8))
            headers["X-Apple-CloudKit-Request-KeyID"] = keyID
            headers["X-Apple-CloudKit-Request-ISO8601Date"] = date
            headers["X-Apple-CloudKit-Request-SignatureV1"] = signature.derRepresentation.base64EncodedString()
        }
        guard let address = url.url else { throw URLError(.badURL) }
        var request = URLRequest(url: address)
        request.httpMethod = "POST"
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }
}
