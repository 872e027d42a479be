/// What an `ASSETID` field's text holds: the one reading of `FieldValue.assetID`.
///
/// The text is `LOCATION#CHECKSUM[;size=N][;receipt=R][;wrappingKey=K][;referenceChecksum=C][;content=D]`:
/// - LOCATION says where the bytes are: a file path relative to the recipe's directory (`!asset PATH`), a
///   `downloadURL` (a record read over Web Services), or nothing (an asset `sharelane serve` keeps).
/// - CHECKSUM identifies the content: `fnv1a64:HEX` (FNV-1a 64 of the bytes) wherever sharelane computes
///   it, a recipe's file and the bytes `sharelane serve` stores alike; or Apple's `fileChecksum`, whose
///   algorithm Apple does not document, so it never equals a checksum sharelane computes.
/// - `size` is the byte count, `receipt` the upload's receipt (a value about to be saved over Web
///   Services), `wrappingKey` and `referenceChecksum` what Apple's private database adds to an upload's
///   answer, passed back as they came.
/// - `content` is the client's own digest (`fnv1a64:HEX`) of the bytes behind a service's checksum that it
///   cannot compute (Apple's): learned when it uploaded them, or by downloading them once, and remembered
///   (Docs/CloudKit.md, "Assets"). It is never sent: the service's checksum is what goes back.
///
/// Two asset values are the same asset when their contents are (`sameContent`): plans compare assets by
/// content, wherever the bytes live.
public struct AssetValue: Sendable, Hashable {
    /// Where the bytes are: a file path, a download URL, or empty.
    public var location: String
    /// `fnv1a64:HEX`, or a service's own `fileChecksum`.
    public var checksum: String
    public var size: Int?
    public var receipt: String?
    public var wrappingKey: String?
    public var referenceChecksum: String?
    /// The client's `fnv1a64:HEX` of the bytes behind a checksum it cannot compute; nil when not known.
    public var content: String?

    /// The prefix of checksums sharelane computes.
    public static let checksumPrefix = "fnv1a64:"

    public init(
        location: String = "", checksum: String, size: Int? = nil, receipt: String? = nil,
        wrappingKey: String? = nil, referenceChecksum: String? = nil, content: String? = nil
    ) {
        self.location = location
        self.checksum = checksum
        self.size = size
        self.receipt = receipt
        self.wrappingKey = wrappingKey
        self.referenceChecksum = referenceChecksum
        self.content = content
    }

    /// Reads an `ASSETID` text; nil when it has no `#CHECKSUM` (a name kept as plain text).
    public init?(text: String) {
        guard let hash = text.lastIndex(of: "#") else { return nil }
        let parts = text[text.index(after: hash)...].split(separator: ";", omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty else { return nil }
        location = String(text[..<hash])
        checksum = String(first)
        for part in parts.dropFirst() {
            if part.hasPrefix("size="), let n = Int(part.dropFirst(5)) {
                size = n
            } else if part.hasPrefix("receipt=") {
                receipt = String(part.dropFirst(8))
            } else if part.hasPrefix("wrappingKey=") {
                wrappingKey = String(part.dropFirst(12))
            } else if part.hasPrefix("referenceChecksum=") {
                referenceChecksum = String(part.dropFirst(18))
            } else if part.hasPrefix("content=") {
                content = String(part.dropFirst(8))
            }
        }
    }

    /// The `ASSETID` text.
    public var text: String {
        var text = "\(location)#\(checksum)"
        if let size { text += ";size=\(size)" }
        if let receipt { text += ";receipt=\(receipt)" }
        if let wrappingKey { text += ";wrappingKey=\(wrappingKey)" }
        if let referenceChecksum { text += ";referenceChecksum=\(referenceChecksum)" }
        if let content { text += ";content=\(content)" }
        return text
    }

    /// Whether the checksum is one sharelane computes from the bytes (`fnv1a64:HEX`).
    public var isComputedChecksum: Bool { checksum.hasPrefix(Self.checksumPrefix) }

    /// The `fnv1a64:HEX` of the bytes: the checksum when sharelane computes it, else the remembered
    /// `content`; nil when neither is known.
    public var contentDigest: String? {
        isComputedChecksum ? checksum : content.flatMap { $0.hasPrefix(Self.checksumPrefix) ? $0 : nil }
    }

    /// Whether `location` is a download URL (`http://` or `https://`).
    public var isDownloadURL: Bool { location.hasPrefix("http://") || location.hasPrefix("https://") }

    /// Whether `location` is a local file path (neither a URL nor empty).
    public var isFilePath: Bool { !location.isEmpty && !isDownloadURL }

    /// How plans and `show` name the asset: a file as its text (`PATH#CHECKSUM`), an asset a service keeps
    /// by its checksum and size (`fnv1a64:HEX, 3000 bytes`), without the download URL's noise.
    public var displayText: String {
        guard !isFilePath else { return text }
        return size.map { "\(checksum), \($0) bytes" } ?? checksum
    }

    /// Whether two `ASSETID` texts stand for the same asset: the same content digest when both have one
    /// (`contentDigest`: a recipe's file and a service's asset whose bytes the client knows), else the same
    /// checksum, else the same text. The one rule plans use to compare assets.
    public static func sameContent(_ a: String, _ b: String) -> Bool {
        guard let left = AssetValue(text: a), let right = AssetValue(text: b) else { return a == b }
        if let x = left.contentDigest, let y = right.contentDigest { return x == y }
        return left.checksum == right.checksum
    }
}

extension FieldValue {
    /// Whether two values are the same for a plan: equal, except that assets (and lists of them) compare by
    /// content (`AssetValue.sameContent`), wherever their bytes are.
    public func isSameValue(as other: FieldValue) -> Bool {
        switch (self, other) {
        case (.assetID(let a), .assetID(let b)):
            return AssetValue.sameContent(a, b)
        case (.list(let type, let a), .list(let otherType, let b)) where type == .assetID && otherType == .assetID:
            return a.count == b.count && zip(a, b).allSatisfy { $0.isSameValue(as: $1) }
        default:
            return self == other
        }
    }
}
