import ShareKit

/// How long each Web Services answer of `sharelane serve` waits (`serve --latency`): a base and a jitter, in
/// whole milliseconds. Each wait is drawn uniformly from base − jitter … base + jitter, never below zero.
///
/// Written as every duration is (`DurationText`: `80ms`, `1.5s`, `1m30s`), and `~` before
/// the jitter: `80ms~20ms` waits 60 to 100 ms.
public struct Latency: Sendable, Hashable {
    /// The middle of the waits, in milliseconds.
    public var milliseconds: Int
    /// How far a wait may stray from `milliseconds`, either way.
    public var jitterMilliseconds: Int

    /// No wait is longer: a server that answers after more than ten minutes looks dead to every client.
    public static let longestMilliseconds = 600_000

    public init(milliseconds: Int, jitterMilliseconds: Int = 0) {
        self.milliseconds = max(0, milliseconds)
        self.jitterMilliseconds = max(0, jitterMilliseconds)
    }

    /// Parses `80ms`, `1.5s`, `2m`, `1m30s`, or any of them `~` a jitter (`80ms~20ms`).
    /// - Throws: `NetworkConditionsError.notADuration`, or `.latencyTooLong` past ten minutes.
    public init(parsing text: String) throws(NetworkConditionsError) {
        let parts = text.split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count <= 2, let base = Self.milliseconds(in: parts[0]),
            let jitter = parts.count == 2 ? Self.milliseconds(in: parts[1]) : 0
        else { throw .notADuration(text) }
        guard base + jitter <= Self.longestMilliseconds else { throw .latencyTooLong(text) }
        self.init(milliseconds: base, jitterMilliseconds: jitter)
    }

    /// The shortest and the longest wait.
    public var range: ClosedRange<Int> {
        max(0, milliseconds - jitterMilliseconds)...(milliseconds + jitterMilliseconds)
    }

    /// The whole milliseconds that `text` spells, read as every duration is (`DurationText`), or nil. A bare
    /// number other than `0` is refused here: `80` could mean milliseconds or seconds.
    static func milliseconds(in text: Substring) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "0" { return 0 }
        guard Double(trimmed) == nil, let seconds = DurationText.seconds(trimmed) else { return nil }
        let total = seconds * 1_000
        guard total <= Double(Int32.max) else { return nil }
        // Whole milliseconds only: `0.5ms` is finer than any network this rehearses.
        let rounded = total.rounded()
        guard abs(total - rounded) < 1e-6 else { return nil }
        return Int(rounded)
    }

    /// `milliseconds` as this type writes them: `80ms`, `1.5s`, `2m`, `1m30s`.
    static func written(_ milliseconds: Int) -> String {
        if milliseconds < 1_000 { return "\(milliseconds)ms" }
        let minutes = milliseconds / 60_000
        let rest = milliseconds % 60_000
        if minutes > 0 { return "\(minutes)m" + (rest == 0 ? "" : written(rest)) }
        let seconds = milliseconds / 1_000
        let thousandths = milliseconds % 1_000
        guard thousandths > 0 else { return "\(seconds)s" }
        var fraction = String(thousandths + 1_000).dropFirst()
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)s"
    }
}

// MARK: - CustomStringConvertible

extension Latency: CustomStringConvertible {
    /// The written form, which `init(parsing:)` reads back: `80ms`, `80ms~20ms`.
    public var description: String {
        Self.written(milliseconds) + (jitterMilliseconds > 0 ? "~" + Self.written(jitterMilliseconds) : "")
    }
}
