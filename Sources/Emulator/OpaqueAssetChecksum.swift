import Foundation
import ShareKit

/// How `sharelane serve --opaque-checksums` spells the `fileChecksum` of an asset: as Apple's look, a base64
/// string of a versioned digest the client cannot compute from the bytes (Apple does not document its
/// algorithm; clients that tried found it is not a digest of the file), so the `http:` store meets what
/// `cloudkit:` meets (Docs/CloudKit.md, "Assets").
///
/// The 21 bytes are a version byte (1), the store's `fnv1a64` of the bytes masked with a key of serve's, and
/// a 12-byte tag over it: serve reads the checksum back (a save, a download URL), and refuses one it did not
/// hand out. The key is serve's own: the client is never told it and does not use it.
struct OpaqueAssetChecksum: Sendable {
    /// The version byte, as Apple's checksums begin with one.
    static let version: UInt8 = 1
    private static let key = Array("sharelane serve --opaque-checksums".utf8)

    /// The opaque `fileChecksum` of the asset kept under `checksum` (`fnv1a64:HEX`), in standard base64; nil
    /// for a checksum serve does not compute.
    static func spell(_ checksum: String) -> String? {
        guard checksum.hasPrefix(AssetValue.checksumPrefix),
            let value = UInt64(checksum.dropFirst(AssetValue.checksumPrefix.count), radix: 16)
        else { return nil }
        let masked = bytes(of: value ^ mask())
        return Data([version] + masked + tag(masked)).base64EncodedString()
    }

    /// The `fnv1a64:HEX` an opaque checksum stands for (standard or URL-safe base64); nil for anything serve
    /// did not hand out.
    static func read(_ opaque: String) -> String? {
        var text = opaque.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text), data.count == 21, data.first == version else { return nil }
        let masked = Array(data[1..<9])
        guard Array(data[9...]) == tag(masked) else { return nil }
        let value = masked.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } ^ mask()
        return AssetValue.checksumPrefix + value.sixteenHexDigits
    }

    /// The checksum as it may stand in a URL path (URL-safe base64, no padding).
    static func urlSafe(_ opaque: String) -> String {
        opaque.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func mask() -> UInt64 {
        var hash = FNV1a64()
        hash.update(key)
        return hash.value
    }

    /// Twelve bytes that only serve's key gives for `masked`.
    private static func tag(_ masked: [UInt8]) -> [UInt8] {
        var first = FNV1a64()
        first.update(key + masked)
        var second = FNV1a64()
        second.update(masked + key)
        return bytes(of: first.value) + Array(bytes(of: second.value).prefix(4))
    }

    private static func bytes(of value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
