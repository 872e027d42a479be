import Foundation

/// Deterministic names the stores hand out, so that a recipe gives the same data on every machine.
///
/// The names come from a 128-bit FNV-1a hash: stable across runs, platforms and Swift versions (unlike
/// `Hasher`), and cheap. It is not a security measure: nothing secret is derived from it.
public enum StableName {
    /// The user record name for an email address: `_` and 32 hex digits of the hash of its normalized form
    /// (`EmailAddress.normalized`), so the same person gets the same record name in every local store.
    public static func userRecordName(email: String) -> UserRecordName {
        "_" + fnv1a128Hex(EmailAddress.normalized(email))
    }

    /// The record name of the hierarchy share rooted at `rootRecordName` in the zone `zoneName`.
    public static func hierarchyShareRecordName(zoneName: String, rootRecordName: String) -> String {
        "share-" + fnv1a128Hex("\(zoneName)\u{0}\(rootRecordName)")
    }

    /// 32 lowercase hex digits of the 128-bit FNV-1a hash of the UTF-8 bytes of `text`.
    public static func fnv1a128Hex(_ text: String) -> String {
        // Offset basis 0x6c62272e07bb014262b821756295c58d; prime 2^88 + 0x13b.
        var hi: UInt64 = 0x6c62_272e_07bb_0142
        var lo: UInt64 = 0x62b8_2175_6295_c58d
        for byte in text.utf8 {
            lo ^= UInt64(byte)
            // (hi·2^64 + lo) · (2^88 + 0x13b) mod 2^128
            let (carry, low) = lo.multipliedFullWidth(by: 0x13b)
            let high = hi &* 0x13b &+ carry &+ (lo << 24)
            hi = high
            lo = low
        }
        return hi.sixteenHexDigits + lo.sixteenHexDigits
    }
}
