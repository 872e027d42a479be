/// One way a replayed answer differs from the recorded one, at a key path of the answer.
public struct Difference: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// Another HTTP status.
        case status
        /// Another `serverErrorCode`.
        case serverErrorCode
        /// A key the recording has and the replay lacks.
        case missingKey
        /// A key only the replay has.
        case extraKey
        /// A key of the recording the replay names otherwise, with the same value.
        case renamedKey
        /// Another JSON type at the same key.
        case type
        /// Another value, after normalizing.
        case value
        /// A volatile value (a change tag, a sync token) that does not correspond: the recording's value
        /// meets another value than before in the replay, or the replay's meets another recorded one.
        case correspondence
        /// A body that is not JSON, or JSON on one side only.
        case body
        /// A request the replay cannot send (a server-to-server key it does not hold).
        case notReplayed
    }

    /// The key path in the answer (`records[0].fields.title.value`), or `status` or `body`.
    public var path: String
    public var kind: Kind
    /// The recorded and replayed values, as JSON or as placeholders (`<tag:3>`); never a credential.
    public var recorded: String?
    public var replayed: String?
    /// Why it is deliberate, when an `--allow` file says it is; such a difference fails nothing.
    public var allowed: String?

    public init(path: String, kind: Kind, recorded: String? = nil, replayed: String? = nil) {
        self.path = path
        self.kind = kind
        self.recorded = recorded
        self.replayed = replayed
    }

    /// The difference in words, after its key path.
    public var message: String {
        let recorded = self.recorded ?? "nothing"
        let replayed = self.replayed ?? "nothing"
        switch kind {
        case .missingKey: return "\(path): missing in the replay (recorded \(recorded))"
        case .extraKey: return "\(path): only in the replay (\(replayed))"
        case .renamedKey: return "\(path): named \(replayed) in the replay"
        case .type: return "\(path): \(recorded) in the recording, \(replayed) in the replay"
        case .status, .serverErrorCode, .value, .body:
            return "\(path): \(recorded) in the recording, \(replayed) in the replay"
        case .correspondence: return "\(path): \(recorded) in the recording, \(replayed) in the replay"
        case .notReplayed: return "\(path): not replayed: \(replayed)"
        }
    }
}
