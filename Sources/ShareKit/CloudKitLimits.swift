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
    /// The largest request or answer body sharelane's client and `record` read whole: one asset, and 1 MB for
    /// the JSON around it.
    public static let bodyBytes = assetBytes + (1 << 20)
    /// An email address (RFC 5321's limit on a path, which iCloud addresses follow); `EmailAddress` checks it.
    public static let emailAddressLength = 254

    /// Refuses a request of more than `operationsPerRequest` items, as CloudKit does: every store and the
    /// emulator ask this, and the clients split their requests by the same number.
    /// - Throws: `BAD_REQUEST` naming the items (`what`: "operations", "users"): "201 users in one request;
    ///   CloudKit allows at most 200".
    public static func checkOperationCount(_ count: Int, of what: String) throws(ShareError) {
        guard count > operationsPerRequest else { return }
        throw ShareError(
            .badRequest, "\(count) \(what) in one request; CloudKit allows at most \(operationsPerRequest)")
    }

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
        recordSizeProblem(size(of: fields)).map { ShareError(.badRequest, "the record \($0)", subject: subject) }
    }

    /// Why a record whose fields count `size` bytes is refused, as the end of a sentence that names the record
    /// ("is 1.2 MB, over CloudKit's limit …"); nil when it fits.
    public static func recordSizeProblem(_ size: Int) -> String? {
        guard size > recordBytes else { return nil }
        return "is \(describe(bytes: size)), over CloudKit's limit of 1 MB a record (assets not counted); keep large "
            + "data in an asset field"
    }

    /// Why an asset of `size` bytes is refused, as the end of a sentence that names the asset ("is 51.0 MB, over
    /// …"); nil when it fits.
    public static func assetSizeProblem(_ size: Int) -> String? {
        guard size > assetBytes else { return nil }
        return "is \(describe(bytes: size)), over CloudKit's limit of 50 MB an asset"
    }

    // MARK: - Names

    /// A zone name, a record name, a record type or a field name: at most 255 bytes.
    public static let nameBytes = 255

    /// Why a zone cannot have this name, in words for a message; nil when it can: 1 to 255 bytes, and no `/`
    /// (sharelane's addresses and `!share-url ZONE/RECORD` put one after a zone's name).
    public static func zoneNameProblem(_ name: String) -> String? {
        guard name.isEmpty || name.utf8.count > nameBytes || name.contains("/") else { return nil }
        return "a zone name is 1 to \(nameBytes) characters, without `/`"
    }

    /// Why a record cannot have this name: 1 to 255 bytes, and a name that starts with `_`, or the zone-wide
    /// share's, is CloudKit's own.
    public static func recordNameProblem(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > nameBytes { return "a record name is 1 to \(nameBytes) characters" }
        if name == zoneShareRecordName || name.hasPrefix("_") {
            return "`\(name)` is reserved by CloudKit; record names may not start with `_` or be "
                + "`\(zoneShareRecordName)`"
        }
        return nil
    }

    /// Why a record type cannot have this name: letters, digits and `_`, starting with a letter, at most 255
    /// bytes (the share type `cloudkit.share` is CloudKit's own).
    public static func recordTypeProblem(_ name: String) -> String? {
        guard name != shareRecordType else { return nil }
        return isIdentifier(name) && name.utf8.count <= nameBytes
            ? nil : "`\(name)` is not a record type; use letters, digits and `_`, starting with a letter"
    }

    /// Why a field cannot have this name: letters, digits and `_`, starting with a letter, at most 255 bytes.
    public static func fieldNameProblem(_ name: String) -> String? {
        isIdentifier(name) && name.utf8.count <= nameBytes
            ? nil : "`\(name)` is not a field name; use letters, digits and `_`, starting with a letter"
    }

    /// Why a schema cannot declare this field on `recordType` (a recipe's `schema:`, `schema/extend`): a field's
    /// name as `fieldNameProblem` says, save for the system fields (`___recordID`, whose indexes a schema may
    /// set) and the share type's own `cloudkit.` fields.
    public static func declaredFieldProblem(_ name: String, recordType: String) -> String? {
        if SchemaRules.isSystemField(name) { return nil }
        if recordType == shareRecordType, name.hasPrefix("cloudkit."), name.utf8.count <= nameBytes { return nil }
        return fieldNameProblem(name)
    }

    /// ASCII letters, digits and `_`, starting with a letter. Read from the UTF-8 bytes: a recipe asks it for
    /// every field of every generated record.
    private static func isIdentifier(_ s: String) -> Bool {
        var bytes = s.utf8.makeIterator()
        guard let first = bytes.next(), isASCIILetter(first) else { return false }
        while let byte = bytes.next() {
            guard isASCIILetter(byte) || (0x30...0x39).contains(byte) || byte == 0x5F else { return false }
        }
        return true
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
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
