import Crypto
import Foundation
import JSONText
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

        /// A file changed after it was written, found where its JSON is not what a saved plan holds:
        /// `damaged at line 3, column 17: expected a number`.
        static func damaged(_ error: JSONReadError) -> Refusal {
            Refusal(
                reason:
                    "it is damaged at line \(error.line), column \(error.column): \(error.fault); the file was changed after `sharelane plan --out` wrote it, so nothing was applied"
            )
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
