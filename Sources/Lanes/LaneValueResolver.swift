import Foundation
import Recipe
import ShareKit

/// Puts the values a lane hands on into a step's text, when the step runs: `${NAME}` and `${NAME.key}` (what
/// an earlier step registered), `${share_url:ZONE}` and `${share_url:ZONE/RECORD}` (the live share's URL, read
/// as the owner), `${record_name:HANDLE}` (a user's record name in the store).
///
/// The one place these are filled in, for every action: the runner rewrites each step with it before the
/// step runs, so a `save`, an `expect` or a `query` sees the value a `sh:` step registered, as a command does.
/// Any other `${…}` is left as it is (a shell's own variable, written `$${HOME}` in the recipe).
struct LaneValueResolver {
    let session: LaneSession
    let recipe: Recipe
    let values: LaneValues

    /// `step` with the lane's values put into all its text.
    /// - Throws: `LaneError.stepFailed` at the step's location when a value cannot be had (a share without a
    ///   URL, a result without the member named).
    func resolve(_ step: Step) async throws -> Step {
        try await step.rewritingText { try await expand($0, step: step) }
    }

    /// `text` with the lane's values put in.
    func expand(_ text: String, step: Step) async throws -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let open = rest.range(of: "${") {
            result += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                result += rest[open.lowerBound...]
                rest = ""
                break
            }
            let body = String(rest[open.upperBound..<close])
            result += try await value(of: body, step: step) ?? "${\(body)}"
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    private func value(of body: String, step: Step) async throws -> String? {
        if body.hasPrefix("share_url:") {
            let address = body.dropFirst("share_url:".count).split(separator: "/", maxSplits: 1).map(String.init)
            guard let zone = address.first else { return nil }
            let owner = try await session.owner(ofZone: zone, in: recipe, at: step.location)
            let share = try await session.namedShare(
                zone: zone, record: address.count > 1 ? address[1] : nil, owner: owner, at: step.location)
            guard let url = share.url ?? share.shortGUID else {
                throw LaneError.stepFailed(
                    action: StepSummary.text(of: step, owner: recipe.owner),
                    reason: "the share of \(body.dropFirst("share_url:".count)) has no URL", location: step.location)
            }
            return url
        }
        if body.hasPrefix("record_name:") {
            let handle = String(body.dropFirst("record_name:".count))
            return try await session.user(handle, in: recipe, at: step.location).recordName
        }
        let parts = body.split(separator: ".", maxSplits: 1).map(String.init)
        guard let name = parts.first, let value = values.value(name) else { return nil }
        if parts.count == 1 { return value.text }
        guard let member = value.member(parts[1]) else {
            throw LaneError.stepFailed(
                action: StepSummary.text(of: step, owner: recipe.owner),
                reason: "`${\(body)}`: the result registered as \(name) has no member \(parts[1])",
                location: step.location)
        }
        return member
    }
}
