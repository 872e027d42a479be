import ShareKit

/// A value shown or written by a plan: a field value, a word describing a property, or a share URL that is
/// known only once the share is saved.
public enum PlannedValue: Sendable, Hashable, Codable {
    /// A record field's value.
    case value(FieldValue)
    /// A property of a zone, share or participant, as a recipe writes it (`read-write`, `true`).
    case text(String)
    /// The URL of the zone-wide share of `zone`, or of the hierarchy share rooted at `record`; the applier
    /// resolves it once that share is saved.
    case shareURL(zone: String, record: String?)

    /// A short human rendering, as the text and markdown renderers print it.
    public var displayString: String {
        switch self {
        case .value(let v): v.displayString
        case .text(let s): DisplayText.escaped(s)
        case .shareURL(let zone, let record):
            "(URL of share \(DisplayText.escaped(zone + (record.map { "/\($0)" } ?? ""))), known after apply)"
        }
    }
}
