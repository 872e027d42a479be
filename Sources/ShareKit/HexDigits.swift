extension UInt64 {
    /// Sixteen lowercase hex digits, zeros in front: how sharelane writes a 64-bit hash (`FNV1a64`, the halves
    /// of `StableName`'s 128-bit one) or a random number (`ShortGUID`).
    public var sixteenHexDigits: String {
        let digits = String(self, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
