import CloudKitWire
import Foundation
import SharelaneTestSupport

/// The golden wire requests in `Golden/`.
enum WireGolden {
    static let files = GoldenFile(besides: #filePath)

    /// The JSON the client sends (sorted keys), pretty-printed for review.
    static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try WireCoding.encoder(pretty: true).encode(value), as: UTF8.self) + "\n"
    }
}
