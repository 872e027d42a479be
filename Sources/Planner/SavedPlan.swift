import Foundation

/// A plan saved to a file by `plan --out`, to be applied exactly by `apply FILE`.
///
/// The file is JSON: `{"sharelane_saved_plan": 1, "plan": {…}}`, the plan with the change tags it was
/// computed from.
public struct SavedPlan: Sendable, Hashable, Codable {
    /// The saved-plan file format version.
    public var sharelaneSavedPlan: Int
    public var plan: Plan

    public init(plan: Plan) {
        self.sharelaneSavedPlan = 1
        self.plan = plan
    }

    enum CodingKeys: String, CodingKey {
        case sharelaneSavedPlan = "sharelane_saved_plan"
        case plan
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

    /// Reads a plan saved by `write(_:to:)`.
    /// - Throws: `PlannerError.unreadablePlan` when the file is missing, is not a saved plan, or comes from
    ///   a newer sharelane.
    public static func read(from path: String) throws -> Plan {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PlannerError.unreadablePlan(path: path, reason: "cannot read the file")
        }
        let saved: SavedPlan
        do {
            saved = try JSONDecoder().decode(SavedPlan.self, from: data)
        } catch {
            throw PlannerError.unreadablePlan(path: path, reason: "it is not a plan saved by `sharelane plan --out`")
        }
        guard saved.sharelaneSavedPlan == 1, saved.plan.formatVersion <= Plan.currentFormatVersion else {
            throw PlannerError.unreadablePlan(
                path: path, reason: "it was saved by a newer sharelane (format \(saved.sharelaneSavedPlan))")
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
