import Foundation
import PlanModel
import Planner
import SharelaneTestSupport
import Testing

/// A saved plan is read by the one JSON cursor: a number outside JSON's grammar is refused, and every
/// refusal of a damaged line names its line and column and what was expected there.
@Suite("Saved plans damaged in their JSON")
struct SavedPlanDamageTests {
    /// The lines of a saved plan of every kind of change, without their newlines.
    static func lines() throws -> [String] {
        String(decoding: try SavedPlan.encoded(SavedPlanHostileTests.plan), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    /// The refusal of the file holding `lines`, read from `path`.
    static func refusal(of lines: [String], at path: String) throws -> String? {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try SavedPlan.read(from: path)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("`01`, `1.`, `-` and `1e` in place of a number are refused at the number's line and column")
    func numbersOutsideTheGrammar() throws {
        let scratch = try TemporaryDirectory("damaged-plan")
        let path = scratch.file("plan.json")
        let original = try Self.lines()
        // The `amount` of the hotel (a DOUBLE) and the `qty` of the milk (an INT64).
        for written in ["\"value\":420.5", "\"value\":2"] {
            let index = try #require(original.firstIndex { $0.contains(written) })
            let line = original[index]
            // Where the number starts, from 0.
            let column =
                line.unicodeScalars.distance(
                    from: line.unicodeScalars.startIndex, to: try #require(line.range(of: written)).lowerBound)
                + "\"value\":".count
            let cases: [(number: String, column: Int, fault: String)] = [
                ("01", column, "expected a number without a leading zero (`0`, `0.5`, `10`, not `01`)"),
                ("1.", column + 2, "expected a digit after `.`"),
                ("-", column + 1, "expected a digit after `-`"),
                ("1e", column + 2, "expected a digit in the exponent"),
            ]
            for (number, at, fault) in cases {
                var lines = original
                let value = "\"value\":"
                lines[index] = line.replacingOccurrences(of: written, with: value + number)
                let refusal = try Self.refusal(of: lines, at: path)
                #expect(
                    refusal
                        == "cannot read the saved plan \(path): it is damaged at line \(index + 1), column \(at + 1): \(fault); the file was changed after `sharelane plan --out` wrote it, so nothing was applied; write one with `sharelane plan --out \(path)`",
                    "\(number) for \(written)")
            }
        }
    }

    @Test("a line cut short, or with a mark out of place, is refused at its line and column")
    func damagedLines() throws {
        let scratch = try TemporaryDirectory("damaged-plan")
        let path = scratch.file("plan.json")
        let original = try Self.lines()
        let zone = try #require(original.firstIndex { $0.hasPrefix("{\"zoneName\"") })

        var lines = original
        lines[zone] = String(lines[zone].dropLast())
        #expect(
            try Self.refusal(of: lines, at: path)?.contains(
                "it is damaged at line \(zone + 1), column \(lines[zone].count + 1): expected more, not the end of the text"
            ) == true)

        lines = original
        lines[zone] = lines[zone].replacingOccurrences(of: "\"exists\":", with: "\"exists\" ")
        let column = try #require(lines[zone].range(of: "\"exists\" ")).upperBound
        #expect(
            try Self.refusal(of: lines, at: path)?.contains(
                "it is damaged at line \(zone + 1), column \(lines[zone].distance(from: lines[zone].startIndex, to: column) + 1): expected `:`"
            ) == true)
    }
}
