import Foundation
import Recipe
import Testing

/// YAML mistakes said as a person would: a tab, a line indented to a column no mapping above it uses, and a
/// zone named like a recipe key (a key indented one level too little).
@Suite("YAML mistakes")
struct YAMLMistakeTests {
    static let header = "sharelane: 1\nname: t\nusers:\n  alice: { email: a@example.com }\n"

    func problems(_ yaml: String) -> [String] {
        do {
            _ = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "m.yaml")
            return []
        } catch {
            return (error.warnings + error.errors).map(\.description)
        }
    }

    @Test("a tab that indents a line: indent with spaces")
    func tab() {
        #expect(
            problems(Self.header + "zones:\n  Trips:\n\trecords: {}\n") == [
                "m.yaml:7:1: error: malformed YAML: line 7 is indented with a tab; YAML indents with spaces only: indent with spaces"
            ])
    }

    @Test("a key indented to a column no mapping above it uses: check the indentation of that line")
    func indentation() {
        #expect(
            problems(
                Self.header + "zones:\n  Trips:\n    records:\n      italy:\n        type: Group\n       fields: {}\n")
                == [
                    "m.yaml:10:8: error: malformed YAML: check the indentation of line 10, and of line 9 above it: "
                        + "`fields: {}` starts in column 8, "
                        + "but the lines above it start in column 7 or 9; a key starts in the same column as the other "
                        + "keys of its mapping, with spaces"
                ])
        // The parser finds out a line late when the line above, the first key of its mapping, is the one out of
        // place: both are named.
        #expect(
            problems(Self.header + "  bob:\n     email: b@example.com\n    name: Bob\n") == [
                "m.yaml:7:5: error: malformed YAML: check the indentation of line 7, and of line 6 above it: `name: Bob` "
                    + "starts in column 5, but the lines above it start in column 3 or 6; a key starts in the same "
                    + "column as the other keys of its mapping, with spaces"
            ])
    }

    @Test("a zone named like a recipe key is a warning, said beside the errors it causes")
    func keywordZone() {
        let found = problems(
            Self.header + "zones:\n  Trips:\n    share: { participants: {} }\n  records:\n    italy: { type: Group }\n")
        #expect(
            found.first
                == "m.yaml:8:3: warning: zone `records` has the name of a recipe key: if `records:` belongs to the zone above it, indent it under that zone's name; if it is a zone, this warning can be ignored",
            "\(found)")
        #expect(found.count == 2, "\(found)")
    }

    @Test("a key of the record indented under fields: indent it to the column of fields:")
    func recordKeyUnderFields() {
        let yaml =
            Self.header + """
                owner: alice
                zones:
                  Trips:
                    records:
                      lisbon:
                        type: Trip
                        fields:
                          title: Lisbon
                          type: City
                          children:
                            day1: { type: Day, fields: { n: 1 } }
                          share:
                            participants: {}

                """
        #expect(
            problems(yaml) == [
                "m.yaml:14:11: error: `children` is a key of the record, not a field: indent it to the column of "
                    + "`fields:` (column 9), not under it",
                "m.yaml:16:11: error: `share` is a key of the record, not a field: indent it to the column of "
                    + "`fields:` (column 9), not under it",
            ])
    }
}
