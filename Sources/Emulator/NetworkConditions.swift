/// The network that `sharelane serve` plays between itself and its clients: how long each answer waits, how
/// many requests a second each user may send, which faults requests meet, and the seed that makes the draws
/// repeatable. Read from `serve --latency/--throttle/--faults/--fault-seed` and from
/// `POST /_sharelane/faults`; shown by `serve` on start, the console's overview and `GET /_sharelane/faults`.
/// Docs/CloudKit.md, "Rehearsing a bad network".
public struct NetworkConditions: Sendable, Hashable {
    public var latency: Latency?
    public var throttle: RequestRate?
    public var faults: FaultRates
    /// The seed of the draws (jitter, and which request meets which fault); nil draws a new one.
    public var seed: UInt64?

    public init(
        latency: Latency? = nil, throttle: RequestRate? = nil, faults: FaultRates = FaultRates(), seed: UInt64? = nil
    ) {
        self.latency = latency
        self.throttle = throttle
        self.faults = faults
        self.seed = seed
    }

    /// Reads each setting as the command line and the endpoint write it; nil or empty text leaves it off.
    /// - Throws: `NetworkConditionsError` for the first setting that cannot be read.
    public init(latency: String?, throttle: String?, faults: String?, seed: String?) throws(NetworkConditionsError) {
        func given(_ text: String?) -> String? {
            guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
            return text
        }
        self.init(
            latency: try given(latency).map { text throws(NetworkConditionsError) in try Latency(parsing: text) },
            throttle: try given(throttle).map { text throws(NetworkConditionsError) in try RequestRate(parsing: text) },
            faults: try given(faults).map { text throws(NetworkConditionsError) in try FaultRates(parsing: text) }
                ?? FaultRates(),
            seed: try given(seed).map { text throws(NetworkConditionsError) in try Self.seed(parsing: text) })
    }

    /// A good network: no wait, no limit, no faults.
    public static let none = NetworkConditions()

    /// Whether requests pass as they would without these conditions (a seed alone changes nothing).
    public var isGood: Bool { (latency?.range.upperBound ?? 0) == 0 && throttle == nil && faults.isEmpty }

    /// A seed: a whole number from 0 to `UInt64.max`.
    /// - Throws: `NetworkConditionsError.notASeed`.
    public static func seed(parsing text: String) throws(NetworkConditionsError) -> UInt64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.allSatisfy({ $0.isASCII && $0.isNumber }), let seed = UInt64(trimmed) else {
            throw .notASeed(text)
        }
        return seed
    }

    /// Each setting in force, named, in a fixed order: `[("latency", "80ms~20ms"), ("throttle", "40/s a user")]`.
    public var settings: [(name: String, value: String)] {
        var settings: [(name: String, value: String)] = []
        if let latency { settings.append(("latency", latency.description)) }
        if let throttle { settings.append(("throttle", "\(throttle) a user")) }
        if !faults.isEmpty { settings.append(("faults", faults.description)) }
        if let seed { settings.append(("seed", "\(seed)")) }
        return settings
    }
}

// MARK: - CustomStringConvertible

extension NetworkConditions: CustomStringConvertible {
    /// One line for people: `latency 80ms~20ms, throttle 40/s a user, faults unavailable=5%,reset=2%, seed 7`,
    /// or `none` for a good network.
    public var description: String {
        let settings = settings
        return settings.isEmpty ? "none" : settings.map { "\($0.name) \($0.value)" }.joined(separator: ", ")
    }
}

// MARK: - Codable

/// The JSON of `GET` and `POST /_sharelane/faults`: `{"latency": "80ms~20ms", "throttle": "40/s", "faults":
/// "unavailable=3%,lost-answer=1%", "seed": 7}`, each key only when its setting is in force, so `{}` is a good
/// network and what `GET` answers can be sent back with `POST`. Reading, a key that is no setting is refused,
/// and `null` or `""` leaves a setting off.
extension NetworkConditions: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let settingNames = ["latency", "throttle", "faults", "seed"]

    /// - Throws: `NetworkConditionsError` (a body that is not an object is `.notAnObject`).
    public init(from decoder: any Decoder) throws {
        let container: KeyedDecodingContainer<Key>
        do {
            container = try decoder.container(keyedBy: Key.self)
        } catch {
            throw NetworkConditionsError.notAnObject
        }
        if let unknown = container.allKeys.first(where: { !Self.settingNames.contains($0.stringValue) }) {
            throw NetworkConditionsError.unknownSetting(unknown.stringValue)
        }
        func text(_ name: String) throws -> String? {
            let key = Key(stringValue: name)
            guard container.contains(key), (try? container.decodeNil(forKey: key)) != true else { return nil }
            guard let text = try? container.decode(String.self, forKey: key) else {
                throw NetworkConditionsError.notText(setting: name)
            }
            return text
        }
        var seedText: String?
        let seedKey = Key(stringValue: "seed")
        if container.contains(seedKey), (try? container.decodeNil(forKey: seedKey)) != true {
            if let number = try? container.decode(UInt64.self, forKey: seedKey) {
                seedText = String(number)
            } else if let text = try? container.decode(String.self, forKey: seedKey) {
                seedText = text
            } else if let number = try? container.decode(Double.self, forKey: seedKey) {
                let written = number == number.rounded() && abs(number) < 1e18 ? String(Int(number)) : "\(number)"
                throw NetworkConditionsError.notASeed(written)
            } else {
                throw NetworkConditionsError.notASeed("(not a number)")
            }
        }
        try self.init(latency: text("latency"), throttle: text("throttle"), faults: text("faults"), seed: seedText)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        if let latency { try container.encode(latency.description, forKey: Key(stringValue: "latency")) }
        if let throttle { try container.encode(throttle.description, forKey: Key(stringValue: "throttle")) }
        if !faults.isEmpty { try container.encode(faults.description, forKey: Key(stringValue: "faults")) }
        if let seed { try container.encode(seed, forKey: Key(stringValue: "seed")) }
    }
}
