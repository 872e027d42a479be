/// FNV-1a 64 of bytes, as lowercase hex: the content checksum of assets (`AssetValue`), which a recipe's
/// `!asset` file and `sharelane serve`'s stored bytes both compute.
public struct FNV1a64: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    /// The checksum of `bytes`, as `fnv1a64:HEX`.
    public static func checksum<S: Sequence>(of bytes: S) -> String where S.Element == UInt8 {
        var hash = FNV1a64()
        hash.update(bytes)
        return AssetValue.checksumPrefix + hash.hex
    }

    public mutating func update<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
    }

    /// Sixteen lowercase hex digits.
    public var hex: String { value.sixteenHexDigits }
}
