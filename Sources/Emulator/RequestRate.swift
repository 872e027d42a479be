/// How many requests one caller may send to `sharelane serve` in a second or a minute (`serve --throttle`):
/// `40/s`, `600/m`. Past it, requests answer `429 THROTTLED` with `retryAfter`, as CloudKit's do.
public struct RequestRate: Sendable, Hashable {
    /// The span a rate counts over.
    public enum Window: String, Sendable, CaseIterable {
        case second = "s"
        case minute = "m"

        public var duration: Duration { self == .second ? .seconds(1) : .seconds(60) }
    }

    /// At most this many requests in any `window`.
    public var requests: Int
    public var window: Window

    /// More than any client sends a single user's requests at; past it the number is surely a typo.
    public static let mostRequests = 1_000_000

    public init(requests: Int, per window: Window = .second) {
        self.requests = max(1, requests)
        self.window = window
    }

    /// Parses `N/s` or `N/m`, N a whole number from 1.
    /// - Throws: `NetworkConditionsError.notARate`.
    public init(parsing text: String) throws(NetworkConditionsError) {
        let parts = text.trimmingCharacters(in: .whitespaces).lowercased().split(
            separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(parts[0]),
            (1...Self.mostRequests).contains(count), let window = Window(rawValue: String(parts[1]))
        else { throw .notARate(text) }
        self.init(requests: count, per: window)
    }
}

// MARK: - CustomStringConvertible

extension RequestRate: CustomStringConvertible {
    /// The written form, which `init(parsing:)` reads back: `40/s`.
    public var description: String { "\(requests)/\(window.rawValue)" }
}
