/// CloudKit's documented limits (Web Services Reference, "Data Size Limits"), in one place: the stores
/// refuse what CloudKit refuses, the recipe loader reports it with its location, and the clients split their
/// requests by them.
public enum CloudKitLimits {
    /// Operations in one `records/modify` (or tokens in one `records/accept`) request.
    public static let operationsPerRequest = 200
    /// Records in one response.
    public static let recordsPerResponse = 200
    /// Participants of one share.
    public static let participantsPerShare = 100
    /// A record's size, its asset fields not counted: 1 MB.
    public static let recordBytes = 1 << 20
    /// One asset: 50 MB.
    public static let assetBytes = 50 << 20
    /// An email address (RFC 5321's limit on a path, which iCloud addresses follow).
    public static let emailAddressLength = 254

    /// The size a record's fields count for against `recordBytes`: names and values in bytes, numbers as 8,
    /// assets not counted (CloudKit stores them apart).
    public static func size(of fields: [String: FieldValue]) -> Int {
        var total = 0
        for (name, value) in fields { total += name.utf8.count + size(of: value) }
        return total
    }

    /// The size one field value counts for (see `size(of:)`).
    public static func size(of value: FieldValue) -> Int {
        switch value {
        case .string(let s): s.utf8.count
        case .int64, .double, .timestamp: 8
        case .bytes(let data): data.count
        case .reference(let r): r.recordName.utf8.count + (r.zoneID?.zoneName.utf8.count ?? 0) + 8
        case .assetID: 0
        case .location: 64
        case .list(_, let values): values.reduce(0) { $0 + size(of: $1) }
        }
    }

    /// Nil when the record's fields fit CloudKit's 1 MB limit, otherwise the refusal CloudKit answers with.
    ///
    /// Web Services documents no code for this refusal (native CloudKit says `limitExceeded`): sharelane
    /// answers `BAD_REQUEST`, as Docs/CloudKit.md says.
    public static func checkRecord(_ fields: [String: FieldValue], subject: String) -> ShareError? {
        let size = size(of: fields)
        guard size > recordBytes else { return nil }
        return ShareError(
            .badRequest,
            "the record is \(describe(bytes: size)), over CloudKit's limit of 1 MB a record (assets not counted); keep large data in an asset field",
            subject: subject)
    }

    /// Nil when `email` is short enough to be an address, otherwise the refusal.
    public static func checkEmail(_ email: String) -> ShareError? {
        guard email.utf8.count > emailAddressLength else { return nil }
        return ShareError(
            .badRequest,
            "an email address is at most \(emailAddressLength) characters; this one has \(email.utf8.count)",
            subject: String(email.prefix(40)) + "…")
    }

    /// `10.0 MB`, `1.2 kB`, `300 bytes`.
    public static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20 {
            return String(Double(bytes * 10 / (1 << 20)) / 10) + " MB"
        }
        if bytes >= 1 << 10 { return String(Double(bytes * 10 / (1 << 10)) / 10) + " kB" }
        return "\(bytes) bytes"
    }
}
