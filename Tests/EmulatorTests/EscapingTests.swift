import CloudKitWire
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharingReport
import Testing

/// One escaper for each written form: a JSON string is escaped alike in a JSON plan and on the wire
/// (`JSONString`), markup alike in the console's HTML and a lane's JUnit XML (`HTML`).
@Suite("One escaper each")
struct EscapingTests {
    /// Backspace, form feed, another control character, quotes, a backslash, a slash, a line end and a
    /// letter beyond ASCII.
    static let text = "a\u{08}b\u{0C}c\u{01}\"q\"\\ /é\n"
    static let json = #""a\bb\fc\u0001\"q\"\\ /é\n""#

    @Test("a string with control characters is the same JSON in a JSON plan and on the wire, and reads back whole")
    func jsonStrings() async throws {
        #expect(JSONString.quoted(Self.text) == Self.json)
        #expect(try JSONDecoder().decode(String.self, from: Data(Self.json.utf8)) == Self.text)

        // On the wire: a record's save, written by hand.
        let zone = ZoneID(zoneName: "Lists")
        let record = Record(recordName: "r", recordType: "Note", zoneID: zone, fields: ["note": .string(Self.text)])
        let body = try WireCoding.body(ModifyRecordsRequest([.init(.create, record)], in: zone, atomic: false))
        #expect(String(decoding: body, as: UTF8.self).contains(Self.json), "\(String(decoding: body, as: UTF8.self))")

        // In a JSON plan: the planned record's field.
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: """
                sharelane: 1
                name: escapes
                users: { alice: { email: alice@example.com } }
                owner: alice
                zones:
                  Lists:
                    records:
                      r: { type: Note, fields: { note: "a\\bb\\fc\\x01\\"q\\"\\\\ /é\\n" } }
                """, file: "escapes.yaml")
        let plan = try await Planner(store: try SQLiteStore.inMemory(), logger: EmulatorHarness.quiet).plan(recipe)
        let rendered = JSONPlanRenderer().render(plan)
        #expect(rendered.contains(Self.json), "\(rendered)")
    }

    @Test("markup: HTML for people and XML for tools write the five special characters alike")
    func markup() {
        let text = "Tom & Jerry's <\"list\">"
        let expected = "Tom &amp; Jerry&#39;s &lt;&quot;list&quot;&gt;"
        #expect(HTML.escaped(text) == expected)
        #expect(HTML.xml(text) == expected)
        // Control characters: shown for people; kept as references, or dropped where XML 1.0 cannot hold them.
        #expect(!HTML.escaped("a\u{01}b").unicodeScalars.contains("\u{01}"))
        #expect(HTML.xml("a\tb\u{01}c\n") == "a&#9;bc&#10;")
    }
}
