import Emulator
import Foundation
import Testing

/// `NetworkConditions`, the one reader and writer of `serve --latency/--throttle/--faults/--fault-seed` and of
/// `/_sharelane/faults`: what each form means, that what it writes reads back the same, and what a bad one says.
@Suite struct NetworkConditionsTests {
    @Test(
        "durations as Terraform writes them, with a jitter after ~",
        arguments: [
            ("80ms", 80, 0, "80ms"), ("1.5s", 1_500, 0, "1.5s"), ("2m", 120_000, 0, "2m"),
            ("1m30s", 90_000, 0, "1m30s"), ("0", 0, 0, "0ms"), ("80ms~20ms", 80, 20, "80ms~20ms"),
            (" 1s ~ 250ms ", 1_000, 250, "1s~250ms"), ("0.25s", 250, 0, "250ms"), ("1.005s", 1_005, 0, "1.005s"),
        ])
    func latencies(text: String, milliseconds: Int, jitter: Int, written: String) throws {
        let latency = try Latency(parsing: text)
        #expect(latency.milliseconds == milliseconds)
        #expect(latency.jitterMilliseconds == jitter)
        #expect(latency.description == written)
        #expect(try Latency(parsing: latency.description) == latency)
    }

    @Test("a jitter never makes a wait negative")
    func jitterRange() {
        #expect(Latency(milliseconds: 80, jitterMilliseconds: 20).range == 60...100)
        #expect(Latency(milliseconds: 10, jitterMilliseconds: 50).range == 0...60)
    }

    @Test(
        "rates and fault shares, written back in one order",
        arguments: [
            ("40/s", "40/s"), ("600/M", "600/m"), (" 1/s", "1/s"),
        ])
    func rates(text: String, written: String) throws {
        #expect(try RequestRate(parsing: text).description == written)
    }

    @Test(
        "fault shares",
        arguments: [
            ("lost-answer=2%, reset=0.5% ,unavailable=12.25%", "unavailable=12.25%,reset=0.5%,lost-answer=2%"),
            ("unavailable=100%", "unavailable=100%"), ("reset=0%", ""), ("", ""), ("reset=1.5%", "reset=1.5%"),
        ])
    func faults(text: String, written: String) throws {
        let rates = try FaultRates(parsing: text)
        #expect(rates.description == written)
        #expect(try FaultRates(parsing: rates.description) == rates)
    }

    @Test(
        "bad forms name the setting, the text, and what to write",
        arguments: [
            ("fast", nil, nil, nil, #"latency "fast" is not a duration: write 80ms, 1.5s, or 80ms~20ms for jitter"#),
            ("80", nil, nil, nil, #"latency "80" is not a duration"#),
            ("0.5ms", nil, nil, nil, #"latency "0.5ms" is not a duration"#),
            ("80ms~", nil, nil, nil, #"latency "80ms~" is not a duration"#),
            ("11m", nil, nil, nil, #"latency "11m" is over 10m"#),
            (nil, "40", nil, nil, #"throttle "40" is not a rate: write the requests each user may send"#),
            (nil, "0/s", nil, nil, #"throttle "0/s" is not a rate"#),
            (nil, "40/h", nil, nil, #"throttle "40/h" is not a rate"#),
            (nil, nil, "unavailable", nil, #"faults "unavailable": "unavailable" is not FAULT=PERCENT"#),
            (nil, nil, "slow=5%", nil, #"faults "slow=5%": there is no fault "slow": write unavailable, reset or"#),
            (nil, nil, "reset=5", nil, #"faults "reset=5": "5" is not a percentage: write 0% to 100%"#),
            (nil, nil, "reset=101%", nil, #""101%" is not a percentage"#),
            (nil, nil, "reset=0.125%", nil, #""0.125%" is not a percentage"#),
            (nil, nil, "reset=1%,reset=2%", nil, #"faults "reset=1%,reset=2%" gives reset twice"#),
            (nil, nil, "unavailable=60%,lost-answer=40.5%", nil, "adds up to 100.5%"),
            (nil, nil, nil, "seven", #"seed "seven" is not a seed: write a whole number from 0 to"#),
            (nil, nil, nil, "-1", #"seed "-1" is not a seed"#),
        ] as [(String?, String?, String?, String?, String)])
    func badForms(latency: String?, throttle: String?, faults: String?, seed: String?, message: String) {
        #expect {
            try NetworkConditions(latency: latency, throttle: throttle, faults: faults, seed: seed)
        } throws: { error in
            (error as? NetworkConditionsError).map { "\($0)".contains(message) } ?? false
        }
    }

    @Test("the command line names its options in the same messages")
    func commandLineNames() {
        let error = NetworkConditionsError.notASeed("x")
        #expect(error.message { $0 == "seed" ? "--fault-seed" : "--\($0)" }.hasPrefix(#"--fault-seed "x" is not"#))
    }

    @Test("the JSON of the endpoint: only the settings in force, read back the same")
    func json() throws {
        let conditions = try NetworkConditions(
            latency: "80ms~20ms", throttle: "40/s", faults: "unavailable=3%,lost-answer=1%", seed: "7")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(conditions), as: UTF8.self)
        #expect(
            text == #"{"faults":"unavailable=3%,lost-answer=1%","latency":"80ms~20ms","seed":7,"throttle":"40/s"}"#)
        #expect(try JSONDecoder().decode(NetworkConditions.self, from: Data(text.utf8)) == conditions)
        #expect(String(decoding: try encoder.encode(NetworkConditions.none), as: UTF8.self) == "{}")
        #expect(
            conditions.description
                == "latency 80ms~20ms, throttle 40/s a user, faults unavailable=3%,lost-answer=1%, seed 7")
        #expect(NetworkConditions.none.description == "none")
        #expect(NetworkConditions(seed: 3).isGood)
    }
}
