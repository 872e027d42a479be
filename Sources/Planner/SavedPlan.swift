import Crypto
import Foundation
import ShareKit

/// A plan saved to a file by `plan --out`, to be applied exactly by `apply FILE`.
///
/// The file is JSON Lines (Docs/Plans.md, "The saved-plan file"): a first line with the format's version
/// (`{"sharelane_saved_plan": 4, …}`) and what the plan is of, a line for each zone of the basis the plan was
/// made against, one for the public records it looked up, one for each change, and a last line with the
/// SHA-256 digest of every byte before it. A file that does not match its digest was changed after it was
/// written (by accident: anyone can compute a digest again), and is refused; with a `SavedPlanKey` the last
/// line also holds an HMAC of the same bytes, which only the key's holder can make. The file is written and
/// read a line at a time, so that only the plan itself is ever whole in memory.
public enum SavedPlan {
    /// The version of the saved-plan file's format, the one this sharelane writes and reads: 5 since the
    /// header names the store by its identity (`storeIdentity`) and the last line may hold a signature; 4
    /// was the first written in lines of its own words (3 was Foundation's encoding of the plan's types).
    public static let formatVersion = 5

    /// A saved plan as read: the plan, the store it was made against, and whether it was signed.
    public struct Contents: Sendable {
        public var plan: Plan
        /// Nil in a file written without one (by a library's caller; `plan --out` always names it).
        public var store: SavedPlanStore?
        /// Whether its last line holds a signature (checked when a key was given).
        public var isSigned: Bool
    }

    /// The temporary file `write` writes before it becomes `path`: `.NAME.PID.partial` beside it.
    public static func partialPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial"
        ).path
    }

    /// Writes the plan to `path`, replacing the file whole once every line is written; the file is its
    /// owner's alone (mode 0600), as a plan names users and their permissions.
    ///
    /// - Parameters:
    ///   - secrets: credentials' values, each sought in every line as it is written, raw, percent-encoded and
    ///     JSON-escaped (`Credentials.forms(of:)`; values shorter than 4 characters are not sought); when a
    ///     line holds one, nothing is written and the result is false.
    ///   - store: the store the plan was made against, which `apply FILE` checks.
    ///   - key: signs the file (`SavedPlanKey`).
    /// - Returns: whether the plan was written.
    /// - Throws: `PlannerError.unreadablePlan` when the file cannot be written.
    @discardableResult
    public static func write(
        _ plan: Plan, to path: String, refusing secrets: [String] = [], store: SavedPlanStore? = nil,
        key: SavedPlanKey? = nil
    ) throws -> Bool {
        let url = URL(fileURLWithPath: path)
        let partial = URL(fileURLWithPath: partialPath(for: path))
        let descriptor = open(partial.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let folder = url.deletingLastPathComponent().path
            throw PlannerError.unreadablePlan(
                path: path,
                reason: "cannot write it: cannot make a file in \(folder) (does it exist, may you write there?)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            var written = false
            defer {
                try? handle.close()
                if !written { try? FileManager.default.removeItem(at: partial) }
            }
            // A partial file an earlier process of the same number left keeps its mode: it is set again.
            guard fchmod(descriptor, 0o600) == 0 else { throw CocoaError(.fileWriteNoPermission) }
            guard
                try encode(plan, store: store, key: key, refusing: secrets, into: { try handle.write(contentsOf: $0) })
            else {
                return false
            }
            try handle.synchronize()
            guard rename(partial.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
            written = true
            return true
        } catch {
            throw PlannerError.unreadablePlan(path: path, reason: "cannot write it: \(error.localizedDescription)")
        }
    }

    /// The bytes of the plan's file.
    /// - Throws: when a part of the plan cannot be encoded.
    public static func encoded(_ plan: Plan) throws -> Data {
        var data = Data()
        _ = try encode(plan, store: nil, key: nil, refusing: []) { data.append(contentsOf: $0) }
        return data
    }

    /// Reads a plan saved by `write(_:to:refusing:)`, checking it against its digest.
    /// - Throws: `PlannerError.unreadablePlan` when the file is missing, is not a saved plan, comes from
    ///   another version of sharelane, or was edited after it was written.
    public static func read(from path: String) throws -> Plan {
        try contents(of: path).plan
    }

    /// Reads a plan saved by `write(_:to:refusing:store:key:)`, checking it against its digest and, with
    /// `key`, its signature.
    /// - Throws: `PlannerError.unreadablePlan` when the file is missing, is not a saved plan, comes from
    ///   another version of sharelane, was changed after it was written, or (with `key`) is not signed with it.
    public static func contents(of path: String, key: SavedPlanKey? = nil) throws -> Contents {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw PlannerError.unreadablePlan(path: path, reason: "cannot read the file")
        }
        defer { try? handle.close() }
        do {
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: 0)
            return try decode(size: Int(clamping: size), key: key) {
                try handle.read(upToCount: chunkSize)
            } versionAtEnd: {
                let size = try handle.seekToEnd()
                try handle.seek(toOffset: size > 512 ? size - 512 : 0)
                return try handle.readToEnd() ?? Data()
            }
        } catch let refusal as Refusal {
            throw PlannerError.unreadablePlan(path: path, reason: refusal.reason)
        } catch {
            throw PlannerError.unreadablePlan(path: path, reason: "cannot read the file")
        }
    }

    /// Reads a plan from the bytes `encoded(_:)` made, as `read(from:)` reads a file.
    /// - Throws: `PlannerError.unreadablePlan`, naming the file `(bytes)`.
    public static func decoded(_ data: Data) throws -> Plan {
        var offset = 0
        do {
            return try decode(size: data.count, key: nil) {
                guard offset < data.count else { return nil }
                let end = min(data.count, offset + chunkSize)
                defer { offset = end }
                return data.subdata(in: offset..<end)
            } versionAtEnd: {
                data.suffix(512)
            }.plan
        } catch let refusal as Refusal {
            throw PlannerError.unreadablePlan(path: "(bytes)", reason: refusal.reason)
        }
    }

    /// Whether the file at `path` looks like a saved plan (a JSON object) rather than a YAML recipe.
    public static func isSavedPlan(at path: String) -> Bool {
        if path.hasSuffix(".yaml") || path.hasSuffix(".yml") { return false }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 256)) ?? Data()
        return String(decoding: head, as: UTF8.self).first { !$0.isWhitespace } == "{"
    }

    /// The bytes read or handed to the file at a time: large enough that a plan of 100,000 records is a few
    /// dozen writes, small beside the plan.
    static let chunkSize = 1 << 20

    /// Why a file is not read, as `PlannerError.unreadablePlan` says it.
    struct Refusal: Error {
        var reason: String
        static let notSaved = Refusal(reason: "it is not a plan saved by `sharelane plan --out`")

        /// A file changed after it was written: `what` is wrong in it.
        static func changed(_ what: String) -> Refusal {
            Refusal(
                reason: "\(what): the file was changed after `sharelane plan --out` wrote it, so nothing was applied")
        }
    }
}

// MARK: - Writing

extension SavedPlan {
    /// Encodes the plan line by line into one buffer, handing `sink` a chunk of whole lines at a time, each
    /// chunk hashed into the digest as it goes.
    /// - Returns: false, having stopped, when a line holds one of `secrets` in any of its forms.
    static func encode(
        _ plan: Plan, store: SavedPlanStore?, key: SavedPlanKey?, refusing secrets: [String],
        into sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        let encoder = JSONEncoder()
        // Keys sorted in the few parts Foundation encodes, so that one plan is always the same lines there.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let needles = secrets.filter { $0.count >= 4 }.flatMap(Credentials.forms(of:)).map { Array($0.utf8) }
        var hash = SHA256()
        var authenticator = key.map { HMAC<SHA256>(key: $0.key) }
        var line = SavedPlanOutput(capacity: chunkSize + (1 << 16))
        // Where the line being written starts in `line.bytes`.
        var lineStart = 0
        func flush() throws {
            try line.bytes.withUnsafeBytes { bytes in
                hash.update(bufferPointer: bytes)
                authenticator?.update(data: bytes)
                try sink(bytes)
            }
            line.removeAll()
        }
        func endLine() throws -> Bool {
            line.newline()
            let start = lineStart
            let holdsSecret =
                !needles.isEmpty
                && line.bytes.withUnsafeBytes { holdsAny(needles, in: UnsafeRawBufferPointer(rebasing: $0[start...])) }
            if holdsSecret { return false }
            if line.bytes.count >= chunkSize { try flush() }
            lineStart = line.bytes.count
            return true
        }

        try header(of: plan, store: store, encoder: encoder, into: &line)
        guard try endLine() else { return false }
        for zone in plan.basis.zones {
            line.openObject()
            line.key("zoneName")
            line.string(zone.zoneName)
            line.key("exists")
            line.bool(zone.exists)
            line.key("recordChangeTags")
            line.stringMap(zone.tags)
            if let undeclared = zone.undeclared {
                line.key("undeclared")
                line.strings(undeclared)
            }
            line.closeObject()
            guard try endLine() else { return false }
        }
        line.openObject()
        line.key("publicRecordNames")
        line.strings(plan.basis.publicRecordNames)
        line.key("recordChangeTags")
        line.stringMap(plan.basis.publicTags)
        line.closeObject()
        guard try endLine() else { return false }
        // The changes, nearly all of the file, are made on every core a batch at a time, each part of a batch
        // into lines of its own, then taken in order: the same bytes as one after another, a batch in memory.
        var batchStart = 0
        while batchStart < plan.changes.count {
            let batch = batchStart..<min(batchStart + changesPerBatch, plan.changes.count)
            let parts = OnEveryCore.parts(of: batch.count, atLeast: changesPerBatch / 8)
            let made = OnEveryCore.map(parts.count) { part in
                let range = (batch.lowerBound + parts[part].lowerBound)..<(batch.lowerBound + parts[part].upperBound)
                return Result { try changeLines(plan.changes[range], refusing: needles) }
            }
            for result in made {
                guard let lines = try result.get() else { return false }
                line.append(lines)
                if line.bytes.count >= chunkSize { try flush() }
            }
            batchStart = batch.upperBound
        }
        try flush()
        let signature = authenticator.map { ",\"signature\":\"\(signatureText($0.finalize()))\"" } ?? ""
        let digest = Array("{\"digest\":\"\(digestText(hash.finalize()))\"\(signature)}\n".utf8)
        try digest.withUnsafeBytes { try sink($0) }
        return true
    }

    /// How many changes are made at once, on every core.
    static let changesPerBatch = 8192

    /// The lines of these changes; nil when one holds one of `needles`.
    private static func changeLines(_ changes: ArraySlice<PlannedChange>, refusing needles: [[UInt8]]) throws
        -> SavedPlanOutput?
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var lines = SavedPlanOutput(capacity: changes.count * 400)
        for index in changes.indices {
            let start = lines.bytes.count
            try lines.change(changes[index], encoder: encoder)
            lines.newline()
            let holdsSecret =
                !needles.isEmpty
                && lines.bytes.withUnsafeBytes { holdsAny(needles, in: UnsafeRawBufferPointer(rebasing: $0[start...])) }
            if holdsSecret { return nil }
        }
        return lines
    }

    /// Whether `text` holds any of `needles`, byte for byte: each needle's first byte found by `memchr`, the
    /// rest compared there.
    private static func holdsAny(_ needles: [[UInt8]], in text: UnsafeRawBufferPointer) -> Bool {
        guard let base = text.baseAddress else { return false }
        return needles.contains { needle in
            guard let first = needle.first, needle.count <= text.count else { return false }
            return needle.withUnsafeBytes { needle in
                guard let start = needle.baseAddress else { return false }
                let last = text.count - needle.count
                var from = 0
                while from <= last, let found = memchr(base + from, Int32(first), last - from + 1) {
                    let at = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(base + at, start, needle.count) == 0 { return true }
                    from = at + 1
                }
                return false
            }
        }
    }

    private static func header(
        of plan: Plan, store: SavedPlanStore?, encoder: JSONEncoder, into line: inout SavedPlanOutput
    ) throws {
        line.openObject()
        line.key("sharelane_saved_plan")
        line.integer(Int64(formatVersion))
        line.key("recipe")
        line.string(plan.recipeName)
        line.key("store")
        line.string(plan.storeName)
        if let container = plan.container {
            line.key("container")
            line.string(container)
        }
        if let environment = plan.environment {
            line.key("environment")
            line.string(environment.rawValue)
        }
        line.key("owner")
        line.json(try encoder.encode(plan.owner))
        line.key("users")
        line.json(try encoder.encode(plan.users))
        line.key("notes")
        line.strings(plan.notes)
        line.key("waiting")
        line.strings(plan.waiting)
        if let access = plan.access {
            line.key("access")
            line.json(try encoder.encode(access))
        }
        if let schema = plan.schema {
            line.key("schema")
            line.json(try encoder.encode(schema))
        }
        if let rearm = plan.rearm {
            line.key("rearm")
            line.openArray()
            for subscription in rearm { line.subscription(subscription) }
            line.closeArray()
        }
        if let assetFiles = plan.assetFiles {
            line.key("assetFiles")
            line.stringMap(assetFiles)
        }
        if let generatedNames = plan.generatedNames {
            line.key("generatedNames")
            line.json(try encoder.encode(generatedNames))
        }
        if let zoneOwners = plan.zoneOwners {
            line.key("zoneOwners")
            line.stringMap(zoneOwners)
        }
        if let store {
            line.key("storeIdentity")
            line.json(try encoder.encode(store))
        }
        line.key("zones")
        line.integer(Int64(plan.basis.zones.count))
        line.key("changes")
        line.integer(Int64(plan.changes.count))
        line.closeObject()
    }

    static func digestText(_ digest: SHA256.Digest) -> String {
        "sha256:" + hex(digest)
    }

    static func signatureText(_ code: HashedAuthenticationCode<SHA256>) -> String {
        "hmac-sha256:" + hex(code)
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}

// MARK: - Reading

extension SavedPlan {
    /// Reads a plan from the chunks `next` hands out (nil at the end), `size` bytes in all, checking its
    /// version first, the counts and depths of what it holds before they are used, and its digest (and, with
    /// `key`, its signature) last; `versionAtEnd` gives the file's last bytes, where format 3 kept its version.
    static func decode(
        size: Int, key: SavedPlanKey?, _ next: @escaping () throws -> Data?, versionAtEnd: () throws -> Data
    ) throws -> Contents {
        var lines = SavedPlanLineReader(next: next, key: key)
        let decoder = JSONDecoder()
        guard let first = try lines.next(hashed: false) else { throw Refusal.notSaved }
        let version: SavedPlanVersion
        do {
            version = try decoder.decode(SavedPlanVersion.self, from: Data(first))
        } catch {
            if let old = formatAtEnd(try versionAtEnd()) { throw versionRefusal(old) }
            // A header of this format that Foundation cannot read (nested too deep, cut short) was edited.
            if formatAtEnd(Data(first.prefix(64))) == formatVersion {
                throw Refusal.changed(
                    "line 1, the header, is not a saved plan's: \(SavedPlanLineReader.fault(of: error))")
            }
            throw Refusal.notSaved
        }
        guard version.sharelane_saved_plan == formatVersion else { throw versionRefusal(version.sharelane_saved_plan) }
        lines.hash(first)
        let header: SavedPlanHeader
        do {
            header = try decoder.decode(SavedPlanHeader.self, from: Data(first))
        } catch {
            throw Refusal.changed("line 1, the header, is not a saved plan's: \(SavedPlanLineReader.fault(of: error))")
        }
        // Every zone and change is a line of at least `shortestLine` bytes: a count the rest of the file cannot
        // hold is refused before anything is made for it.
        let rest = max(0, size - first.count - 1)
        for (count, what) in [(header.zones, "zones"), (header.changes, "changes")] {
            guard count >= 0 else {
                throw Refusal.changed("line 1 says \(count) \(what) follow, and a count is never negative")
            }
            guard count <= rest / shortestLine else {
                throw Refusal.changed(
                    "line 1 says \(count) \(what) follow, more lines than the \(rest) bytes after it can hold")
            }
        }
        guard header.zones + header.changes <= rest / shortestLine else {
            throw Refusal.changed(
                "line 1 says \(header.zones) zones and \(header.changes) changes follow, more lines than the \(rest) bytes after it can hold"
            )
        }
        var zones: [ZoneBasis] = []
        zones.reserveCapacity(min(header.zones, rest / reservedLine))
        for _ in 0..<header.zones { zones.append(try lines.read { try $0.zoneBasis() }) }
        let publicBasis = try lines.read { input in
            let start = input.offset
            try input.skipValue()
            return try decoder.decode(SavedPublicBasis.self, from: input.data(from: start))
        }
        var plan = Plan(
            recipeName: header.recipe, storeName: header.store, owner: header.owner, users: header.users,
            changes: [], notes: header.notes, waiting: header.waiting,
            basis: PlanBasis(
                zones: zones, publicRecordNames: publicBasis.publicRecordNames,
                publicTags: publicBasis.recordChangeTags),
            access: header.access)
        plan.schema = header.schema
        plan.rearm = header.rearm?.map(\.planned)
        plan.assetFiles = header.assetFiles
        plan.container = header.container
        plan.environment = header.environment
        plan.generatedNames = header.generatedNames
        plan.zoneOwners = header.zoneOwners
        plan.changes.reserveCapacity(min(header.changes, rest / reservedLine))
        for _ in 0..<header.changes { plan.changes.append(try lines.read { try $0.change(decoder: decoder) }) }
        let expected = digestText(lines.digest)
        let signature = lines.signature.map(signatureText)
        let digest = try lines.read(hashed: false) { input in
            let start = input.offset
            try input.skipValue()
            return try decoder.decode(SavedPlanDigest.self, from: input.data(from: start))
        }
        guard digest.digest == expected else {
            throw Refusal.changed("its content does not match its digest")
        }
        guard try lines.next(hashed: false) == nil else {
            throw Refusal.changed("it goes on after its digest (line \(lines.number))")
        }
        if let signature {
            guard let signed = digest.signature else {
                throw Refusal(
                    reason:
                        "it is not signed, and \(SavedPlanKey.environmentVariable) is set: only a plan saved by `sharelane plan --out` with the same key set is applied, so nothing was applied"
                )
            }
            guard constantTimeEqual(signed, signature) else {
                throw Refusal(
                    reason:
                        "its signature does not match \(SavedPlanKey.environmentVariable): the file was changed after it was signed, or signed with another key, so nothing was applied"
                )
            }
        }
        return Contents(plan: plan, store: header.storeIdentity, isSigned: digest.signature != nil)
    }

    /// The fewest bytes a zone's or a change's line has, its newline included: `{"zoneName":"","exists":true}`
    /// is 30.
    static let shortestLine = 16

    /// The bytes of file a zone or change is given room for before it is read: a change is 327 bytes on
    /// average in the bench's plan, and a file whose lines are shorter has its arrays grow as they are read.
    private static let reservedLine = 256

    /// Whether two texts are the same, in a time that does not depend on where they differ.
    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// Format 3 and before were one JSON object with sorted keys, `sharelane_saved_plan` last.
    private static func formatAtEnd(_ tail: Data) -> Int? {
        let text = String(decoding: tail, as: UTF8.self)
        guard let key = text.range(of: "\"sharelane_saved_plan\"", options: .backwards) else { return nil }
        let rest = text[key.upperBound...].drop { $0 == " " || $0 == ":" || $0 == "\n" }
        return Int(rest.prefix { $0.isNumber })
    }

    private static func versionRefusal(_ version: Int) -> Refusal {
        let which = version > formatVersion ? "a newer" : "an older"
        let then =
            version > formatVersion
            ? "apply it with that sharelane" : "a saved plan is for the review it was made in, so make it again"
        return Refusal(
            reason:
                "it was saved by \(which) sharelane (format \(version)), and this one reads format \(formatVersion): \(then)"
        )
    }
}

/// The lines of a saved plan, from chunks of its bytes, each hashed as it is read: no more than a chunk and a
/// line of the file is in memory at once.
struct SavedPlanLineReader {
    private let next: () throws -> Data?
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var hasher = SHA256()
    private var authenticator: HMAC<SHA256>?
    /// The number of the line last read, from 1.
    private(set) var number = 0

    init(next: @escaping () throws -> Data?, key: SavedPlanKey? = nil) {
        self.next = next
        authenticator = key.map { HMAC<SHA256>(key: $0.key) }
    }

    /// The SHA-256 of the lines hashed so far, each with its newline.
    var digest: SHA256.Digest { hasher.finalize() }

    /// The HMAC-SHA256 of the lines hashed so far with the key, when there is one.
    var signature: HashedAuthenticationCode<SHA256>? { authenticator?.finalize() }

    mutating func hash(_ line: [UInt8]) {
        hasher.update(data: line)
        hasher.update(data: [UInt8(ascii: "\n")])
        authenticator?.update(data: line)
        authenticator?.update(data: [UInt8(ascii: "\n")])
    }

    /// The next line without its newline, hashed unless told; nil at the end.
    mutating func next(hashed: Bool = true) throws -> [UInt8]? {
        guard let range = try nextRange() else { return nil }
        let line = Array(buffer[range])
        if hashed { hash(line) }
        return line
    }

    /// Reads the next line with `body`, which must read the whole of it.
    /// - Throws: `SavedPlan.Refusal` when there is no next line, or it is not what `body` reads.
    mutating func read<Value>(hashed: Bool = true, _ body: (inout SavedPlanInput) throws -> Value) throws -> Value {
        guard let range = try nextRange() else {
            throw SavedPlan.Refusal(reason: "it ends at line \(number), before its digest: the file is not whole")
        }
        let number = self.number
        if hashed {
            var hasher = self.hasher
            var authenticator = self.authenticator
            buffer.withUnsafeBytes {
                let line = UnsafeRawBufferPointer(rebasing: $0[range])
                hasher.update(bufferPointer: line)
                authenticator?.update(data: line)
            }
            hasher.update(data: [UInt8(ascii: "\n")])
            authenticator?.update(data: [UInt8(ascii: "\n")])
            self.hasher = hasher
            self.authenticator = authenticator
        }
        return try buffer.withUnsafeBufferPointer { bytes in
            let line = UnsafeBufferPointer(rebasing: bytes[range])
            var input = SavedPlanInput(line)
            do {
                let value = try body(&input)
                guard input.atEnd else {
                    throw SavedPlanInput.Unreadable("more follows the line's value", at: input.offset)
                }
                return value
            } catch {
                throw SavedPlan.Refusal.changed(
                    "line \(number) is not a line of a plan saved by `sharelane plan --out`: \(Self.fault(of: error))")
            }
        }
    }

    /// What is wrong in a line, from the error its reading threw.
    static func fault(of error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty
                ? "the line"
                : "`" + keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") + "`"
        }
        switch error {
        case let unreadable as SavedPlanInput.Unreadable:
            return unreadable.fault + (unreadable.offset.map { " (at byte \($0 + 1) of the line)" } ?? "")
        case DecodingError.keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(path(context.codingPath)) is not what it should be: \(context.debugDescription)"
        case DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty:
            return "it is not JSON a saved plan can hold" + (context.underlyingError.map { " (\($0))" } ?? "")
        case DecodingError.dataCorrupted(let context):
            return "\(path(context.codingPath)) is not what it should be: \(context.debugDescription)"
        default:
            return "it is not the JSON a saved plan's line holds"
        }
    }

    private mutating func nextRange() throws -> Range<Int>? {
        while true {
            let start = self.start
            let found: Int? = buffer.withUnsafeBytes { bytes in
                guard start < bytes.count, let base = bytes.baseAddress,
                    let newline = memchr(base + start, 0x0A, bytes.count - start)
                else { return nil }
                return base.distance(to: UnsafeRawPointer(newline))
            }
            if let newline = found {
                self.start = newline + 1
                number += 1
                return start..<newline
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                self.start = buffer.count
                number += 1
                return start..<buffer.count
            }
            // What is left of the last chunk is a part of a line: only that is moved.
            buffer.removeFirst(start)
            self.start = 0
            guard let chunk = try next(), !chunk.isEmpty else {
                atEnd = true
                continue
            }
            buffer.append(contentsOf: chunk)
        }
    }
}
