/// Network conditions that cannot be read, from `serve`'s options or `POST /_sharelane/faults`. Each case names
/// the text at fault; the message says what to write instead.
public enum NetworkConditionsError: Error, Equatable, Sendable {
    /// `latency`: not `80ms`, `1.5s` or `80ms~20ms`.
    case notADuration(String)
    /// `latency`: longer than `Latency.longestMilliseconds`.
    case latencyTooLong(String)
    /// `throttle`: not `40/s` or `600/m`.
    case notARate(String)
    /// `faults`: an entry without `=`.
    case notAFaultEntry(String, entry: String)
    /// `faults`: a name that is no fault.
    case unknownFault(String, name: String)
    /// `faults`: a share that is not 0%…100%.
    case notAPercentage(String, value: String)
    /// `faults`: one fault given twice.
    case repeatedFault(String, fault: NetworkFault)
    /// `faults`: shares adding up to more than 100% (the total as written).
    case faultsOverWhole(String, total: String)
    /// `seed`: not a whole number that fits 64 bits.
    case notASeed(String)
    /// The endpoint's body is not a JSON object.
    case notAnObject
    /// The endpoint's body has a key that is no setting.
    case unknownSetting(String)
    /// The endpoint's body gives a setting as something other than text (a number for `latency`).
    case notText(setting: String)

    /// The setting at fault, as the endpoint's JSON spells it; nil for the body as a whole.
    public var setting: String? {
        switch self {
        case .notADuration, .latencyTooLong: "latency"
        case .notARate: "throttle"
        case .notAFaultEntry, .unknownFault, .notAPercentage, .repeatedFault, .faultsOverWhole: "faults"
        case .notASeed: "seed"
        case .notAnObject, .unknownSetting: nil
        case .notText(let setting): setting
        }
    }

    /// The message, with the setting named as `name` spells it: `latency` in JSON, `--latency` on the command
    /// line.
    public func message(naming name: (String) -> String) -> String {
        let setting = name(self.setting ?? "")
        switch self {
        case .notADuration(let text):
            return "\(setting) \"\(text)\" is not a duration: write 80ms, 1.5s, or 80ms~20ms for jitter"
        case .latencyTooLong(let text):
            return "\(setting) \"\(text)\" is over 10m, which no client waits for: write a wait such as 80ms or 2s"
        case .notARate(let text):
            return "\(setting) \"\(text)\" is not a rate: write the requests each user may send a second or a "
                + "minute, such as 40/s or 600/m"
        case .notAFaultEntry(let text, let entry):
            return "\(setting) \"\(text)\": \"\(entry)\" is not FAULT=PERCENT: write the faults as "
                + "unavailable=5%,reset=2%,lost-answer=2%"
        case .unknownFault(let text, let faultName):
            return "\(setting) \"\(text)\": there is no fault \"\(faultName)\": write unavailable, reset or "
                + "lost-answer, such as unavailable=5%"
        case .notAPercentage(let text, let value):
            return "\(setting) \"\(text)\": \"\(value)\" is not a percentage: write 0% to 100% (up to two "
                + "decimals), such as reset=2% or reset=0.5%"
        case .repeatedFault(let text, let fault):
            return "\(setting) \"\(text)\" gives \(fault.rawValue) twice: give each fault once"
        case .faultsOverWhole(let text, let total):
            return "\(setting) \"\(text)\" adds up to \(total): each request meets one fault at most, so the "
                + "shares add up to 100% at most"
        case .notASeed(let text):
            return "\(setting) \"\(text)\" is not a seed: write a whole number from 0 to \(UInt64.max), such as 7"
        case .notAnObject:
            return "the body is not a JSON object: send any of "
                + #"{"latency": "80ms~20ms", "throttle": "40/s", "faults": "unavailable=3%,lost-answer=1%", "#
                + #""seed": 7}, or {} for a good network"#
        case .unknownSetting(let key):
            return "\"\(key)\" is not a setting: the settings are latency, throttle, faults and seed"
        case .notText(let key):
            let example =
                switch key {
                case "latency": "\"80ms~20ms\""
                case "throttle": "\"40/s\""
                default: "\"unavailable=3%,lost-answer=1%\""
                }
            return "\(setting) must be text, such as {\"\(key)\": \(example)}, or null to leave it off"
        }
    }
}

// MARK: - CustomStringConvertible

extension NetworkConditionsError: CustomStringConvertible {
    /// The message with the setting as the endpoint's JSON names it.
    public var description: String { message { $0 } }
}
