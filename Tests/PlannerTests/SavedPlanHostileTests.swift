import Foundation
import PlanModel
import Planner
import SharelaneTestSupport
import Testing

/// The saved-plan reader checks every count and depth a file gives before it uses it: an edited file is
/// refused, saying what is wrong and on which line, and never crashes the reader. A key signs the file.
@Suite("Saved plans edited to crash the reader")
struct SavedPlanHostileTests {
    /// Every kind of change, against a basis of one zone.
    static let plan = {
        var plan = GoldenTests.everyKind
        plan.basis = LiveBasis(zones: [ZoneBasis(zoneName: "Lists", exists: true, tags: ["milk": "12"])])
        return plan
    }()

    /// The file's lines, without their newlines.
    static func lines() throws -> [String] {
        String(decoding: try SavedPlan.encoded(plan), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The refusal `lines` get from the reader, or nil when they are read.
    static func refusal(of lines: [String]) -> String? {
        do {
            _ = try SavedPlan.decoded(Data((lines.joined(separator: "\n") + "\n").utf8))
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("a count of -1 or of more lines than the file holds is refused on line 1, before anything is made for it")
    func counts() throws {
        let original = try Self.lines()
        let zones = try #require(original[0].firstMatch(of: /"zones":(\d+)/)?.output.1)
        let changes = try #require(original[0].firstMatch(of: /"changes":(\d+)/)?.output.1)
        let cases: [(String, String, String)] = [
            ("\"zones\":\(zones)", "\"zones\":-1", "line 1 says -1 zones follow, and a count is never negative"),
            (
                "\"changes\":\(changes)", "\"changes\":-1",
                "line 1 says -1 changes follow, and a count is never negative"
            ),
            (
                "\"changes\":\(changes)", "\"changes\":9223372036854775807",
                "line 1 says 9223372036854775807 changes follow, more lines than the"
            ),
            (
                "\"zones\":\(zones)", "\"zones\":9223372036854775807",
                "line 1 says 9223372036854775807 zones follow, more lines than the"
            ),
            (
                "\"changes\":\(changes)", "\"changes\":4611686018427387904",
                "line 1 says 4611686018427387904 changes follow, more lines than the"
            ),
        ]
        for (found, replaced, says) in cases {
            var lines = original
            lines[0] = lines[0].replacingOccurrences(of: found, with: replaced)
            let refusal = Self.refusal(of: lines)
            #expect(refusal?.contains(says) == true, "\(replaced): \(refusal ?? "read")")
            #expect(refusal?.contains("the file was changed after `sharelane plan --out` wrote it") == true)
        }
    }

    /// The column, from 1, of the `{` or `[` that opens the `level`th object or array of an ASCII line whose
    /// strings hold no brackets.
    static func column(ofLevel level: Int, in line: String) -> Int {
        var opened = 0
        for (index, byte) in line.utf8.enumerated() where byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
            opened += 1
            if opened == level { return index + 1 }
        }
        return 0
    }

    @Test("300,000 nested arrays, in a line the reader skips or one it reads, are refused naming the line")
    func depth() throws {
        let original = try Self.lines()
        let deep = String(repeating: "[", count: 300_000)
        let publicLine = try #require(original.firstIndex { $0.hasPrefix("{\"publicRecordNames\"") })
        var lines = original
        lines[publicLine] = "{\"publicRecordNames\":" + deep
        // The 65th level is the 64th `[`, after the 21 characters of `{"publicRecordNames":`.
        #expect(
            Self.refusal(of: lines)?.contains(
                "it is damaged at line \(publicLine + 1), column 85: its objects and arrays nest deeper than 64 levels"
            ) == true)

        // A field value's LIST inside a LIST, as deep as the file likes: read by hand, level by level.
        let change = publicLine + 1
        let list = String(repeating: "{\"type\":\"LIST\",\"elementType\":\"STRING\",\"value\":[", count: 100_000)
        lines = original
        lines[change] =
            "{\"action\":\"create\",\"kind\":\"record\",\"zoneName\":\"Z\",\"recordName\":\"r\","
            + "\"record\":{\"recordType\":\"T\",\"fields\":{\"f\":" + list
        #expect(
            Self.refusal(of: lines)?.contains(
                "it is damaged at line \(change + 1), column \(Self.column(ofLevel: 65, in: lines[change])): its objects and arrays nest deeper than 64 levels"
            ) == true, "\(Self.refusal(of: lines) ?? "read")")

        lines = original
        lines[0] = lines[0].replacingOccurrences(of: "\"notes\":[", with: "\"notes\":[" + deep)
        #expect(Self.refusal(of: lines)?.contains("line 1, the header, is not a saved plan's") == true)

        // What the skip reads must still be JSON, and a line's value must end the line.
        lines = original
        lines[publicLine] = lines[publicLine].replacingOccurrences(
            of: "\"publicRecordNames\":[", with: "\"publicRecordNames\":[,")
        #expect(
            Self.refusal(of: lines)?.contains("it is damaged at line \(publicLine + 1), column 23: expected a value")
                == true)
        lines = original
        lines[publicLine] += " {}"
        #expect(
            Self.refusal(of: lines)?.contains(
                "it is damaged at line \(publicLine + 1), column \(lines[publicLine].count - 1): expected the end of the line after its value"
            ) == true)
    }

    @Test("the reader's refusal says which fault: a zone's line without its name")
    func fault() throws {
        var lines = try Self.lines()
        let zone = try #require(lines.firstIndex { $0.hasPrefix("{\"zoneName\"") })
        lines[zone] = lines[zone].replacingOccurrences(of: "\"zoneName\"", with: "\"zone\"")
        // Found once the zone's object is read whole: at the end of the line.
        #expect(
            Self.refusal(of: lines)?.contains(
                "it is damaged at line \(zone + 1), column \(lines[zone].count + 1): a zone's line needs its `zoneName` and `exists`"
            ) == true, "\(Self.refusal(of: lines) ?? "read")")
    }

    @Test(
        "a file signed with a key is read with it; with another key, or unsigned, it is refused; its store is read back"
    )
    func signed() throws {
        let scratch = try TemporaryDirectory("signed-plan")
        let path = scratch.file("plan.json")
        let store = SavedPlanStore(kind: .sqlite, path: "/srv/st.sqlite", file: "1:2")
        let key = try SavedPlanKey("0123456789abcdef-one")
        try SavedPlan.write(Self.plan, to: path, store: store, key: key)
        let read = try SavedPlan.contents(of: path, key: key)
        #expect(read.plan == Self.plan && read.store == store && read.isSigned)
        #expect(try SavedPlan.contents(of: path).isSigned)
        #expect(!(try String(contentsOfFile: path, encoding: .utf8).contains("0123456789abcdef-one")))

        #expect {
            _ = try SavedPlan.contents(of: path, key: try SavedPlanKey("0123456789abcdef-two"))
        } throws: { "\($0)".contains("its signature does not match SHARELANE_PLAN_KEY") }
        try SavedPlan.write(Self.plan, to: path, store: store)
        #expect {
            _ = try SavedPlan.contents(of: path, key: key)
        } throws: { "\($0)".contains("it is not signed, and SHARELANE_PLAN_KEY is set") }
        #expect(throws: SavedPlanKey.TooShort.self) { try SavedPlanKey("short") }
    }
}
