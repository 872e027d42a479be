import Crypto
import Foundation

/// A plan saved to a file by `plan --out`, to be applied exactly by `apply FILE`.
///
/// The file is JSON: `{"sharelane_saved_plan": 3, "digest": "sha256:…", "plan": {…}}`, the plan with the
/// change tags it was computed from and a digest of the plan's content. A file whose plan does not match
/// its digest was edited after it was written, and is refused: what a reviewer approved is what applies.
public struct SavedPlan: Sendable, Hashable, Codable {
    /// The saved-plan file format version.
    public var sharelaneSavedPlan: Int
    /// `sha256:` and the hex SHA-256 of the plan's canonical JSON (keys sorted, no spaces).
    public var digest: String
    public var plan: Plan

    /// The version of the saved-plan file's format, the one this sharelane writes and reads: 3 since the plan
    /// inside no longer carries a version of its own.
    public static let formatVersion = 3

    /// A saved plan of `plan`, with its digest.
    /// - Throws: when the plan cannot be encoded.
    public init(plan: Plan) throws {
        self.sharelaneSavedPlan = Self.formatVersion
        self.digest = try Self.digest(of: plan)
        self.plan = plan
    }

    enum CodingKeys: String, CodingKey {
        case sharelaneSavedPlan = "sharelane_saved_plan"
        case digest
        case plan
    }

    /// The digest of a plan's content: the same for a plan and for the plan read back from its file.
    /// - Throws: when the plan cannot be encoded.
    public static func digest(of plan: Plan) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let hash = SHA256.hash(data: try encoder.encode(plan))
        return "sha256:"
            + hash.map { byte in
                let digits = String(byte, radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
    }

    /// The file's bytes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// Writes the plan to `path`.
    /// - Throws: `PlannerError.unreadablePlan` when the file cannot be written.
    public static func write(_ plan: Plan, to path: String) throws {
        do {
            try SavedPlan(plan: plan).encoded().write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw PlannerError.unreadablePlan(path: path, reason: "cannot write it: \(error.localizedDescription)")
        }
    }

    /// Reads a plan saved by `write(_:to:)`, checking it against its digest.
    /// - Throws: `PlannerError.unreadablePlan` when the file is missing, is not a saved plan, comes from
    ///   another version of sharelane, or was edited after it was written.
    public static func read(from path: String) throws -> Plan {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PlannerError.unreadablePlan(path: path, reason: "cannot read the file")
        }
        struct Header: Decodable {
            var sharelane_saved_plan: Int
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw PlannerError.unreadablePlan(path: path, reason: "it is not a plan saved by `sharelane plan --out`")
        }
        guard header.sharelane_saved_plan == formatVersion else {
            let which = header.sharelane_saved_plan > formatVersion ? "a newer" : "an older"
            throw PlannerError.unreadablePlan(
                path: path, reason: "it was saved by \(which) sharelane (format \(header.sharelane_saved_plan))")
        }
        let saved: SavedPlan
        do {
            saved = try JSONDecoder().decode(SavedPlan.self, from: data)
        } catch {
            throw PlannerError.unreadablePlan(path: path, reason: "it is not a plan saved by `sharelane plan --out`")
        }
        guard (try? digest(of: saved.plan)) == saved.digest else {
            throw PlannerError.unreadablePlan(
                path: path,
                reason:
                    "its content does not match its digest: the file was changed after `sharelane plan --out` wrote it, so nothing was applied"
            )
        }
        return saved.plan
    }

    /// Whether the file at `path` looks like a saved plan (a JSON object) rather than a YAML recipe.
    public static func isSavedPlan(at path: String) -> Bool {
        if path.hasSuffix(".yaml") || path.hasSuffix(".yml") { return false }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 256)) ?? Data()
        return String(decoding: head, as: UTF8.self).first { !$0.isWhitespace } == "{"
    }
}
