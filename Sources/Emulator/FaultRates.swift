/// A fault a request to `sharelane serve` can meet (`serve --faults`); Docs/CloudKit.md, "Rehearsing a bad
/// network", says what each means for a client.
public enum NetworkFault: String, Sendable, CaseIterable {
    /// `503 TRY_AGAIN_LATER` with `retryAfter`; nothing is applied.
    case unavailable
    /// The connection closes before the request is read: no answer, nothing applied.
    case reset
    /// The request is applied, then the connection closes before the answer is sent.
    case lostAnswer = "lost-answer"
}

/// Which share of requests meets each fault: `unavailable=5%,reset=2%,lost-answer=0.5%`.
///
/// Shares are kept in hundredths of a percent, so that they add up exactly and a seeded draw picks the same
/// fault on every machine. Together they are at most 100%: each request meets one fault at most.
public struct FaultRates: Sendable, Hashable {
    /// Hundredths of a percent (0…10,000) for each fault given; a fault at 0% is left out.
    public private(set) var hundredths: [NetworkFault: Int]

    /// No faults.
    public init() {
        hundredths = [:]
    }

    /// Shares in percent (`[.reset: 2.5]`), rounded to hundredths; nil when they add up to more than 100%.
    public init?(percent: [NetworkFault: Double]) {
        var kept: [NetworkFault: Int] = [:]
        for (fault, share) in percent {
            guard share.isFinite, share >= 0 else { return nil }
            let value = Int((share * 100).rounded())
            if value > 0 { kept[fault] = value }
        }
        guard kept.values.reduce(0, +) <= 10_000 else { return nil }
        hundredths = kept
    }

    /// Parses `NAME=P%` entries separated by commas; an empty text is no faults.
    /// - Throws: `NetworkConditionsError` naming the entry at fault.
    public init(parsing text: String) throws(NetworkConditionsError) {
        hundredths = [:]
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .notAFaultEntry(text, entry: entry) }
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard let fault = NetworkFault(rawValue: name.lowercased()) else {
                throw .unknownFault(text, name: name)
            }
            let share = parts[1].trimmingCharacters(in: .whitespaces)
            guard let value = Self.hundredths(in: share) else { throw .notAPercentage(text, value: share) }
            guard hundredths[fault] == nil else { throw .repeatedFault(text, fault: fault) }
            hundredths[fault] = value
        }
        let total = hundredths.values.reduce(0, +)
        guard total <= 10_000 else { throw .faultsOverWhole(text, total: Self.written(total)) }
        hundredths = hundredths.filter { $0.value > 0 }
    }

    public var isEmpty: Bool { hundredths.isEmpty }

    /// The share of requests that meet `fault`, in percent.
    public func percent(_ fault: NetworkFault) -> Double { Double(hundredths[fault] ?? 0) / 100 }

    /// The fault of a draw in 0..<10,000: unavailable takes the first share, reset the next, lost-answer the
    /// next; a draw past them all meets none.
    func fault(forDraw draw: Int) -> NetworkFault? {
        var upTo = 0
        for fault in NetworkFault.allCases {
            upTo += hundredths[fault] ?? 0
            if draw < upTo { return fault }
        }
        return nil
    }

    /// `5%`, `0.5%`, `12.25%`: a number from 0 to 100 with at most two decimals, then `%`.
    static func hundredths(in text: String) -> Int? {
        guard text.hasSuffix("%") else { return nil }
        let number = text.dropLast().trimmingCharacters(in: .whitespaces)
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].count <= 3,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }), let whole = Int(parts[0])
        else { return nil }
        var fraction = 0
        if parts.count == 2 {
            guard (1...2).contains(parts[1].count), let digits = Int(parts[1]) else { return nil }
            fraction = parts[1].count == 1 ? digits * 10 : digits
        }
        let value = whole * 100 + fraction
        return value <= 10_000 ? value : nil
    }

    /// Hundredths of a percent as written: `5%`, `0.5%`, `12.25%`.
    static func written(_ hundredths: Int) -> String {
        let fraction = hundredths % 100
        guard fraction > 0 else { return "\(hundredths / 100)%" }
        let digits = fraction % 10 == 0 ? "\(fraction / 10)" : (fraction < 10 ? "0\(fraction)" : "\(fraction)")
        return "\(hundredths / 100).\(digits)%"
    }
}

// MARK: - CustomStringConvertible

extension FaultRates: CustomStringConvertible {
    /// The written form, which `init(parsing:)` reads back, in a fixed order: `unavailable=5%,reset=2%`; empty
    /// for no faults.
    public var description: String {
        NetworkFault.allCases.compactMap { fault in
            hundredths[fault].map { "\(fault.rawValue)=\(Self.written($0))" }
        }.joined(separator: ",")
    }
}
