import Testing

@testable import PlanModel
@testable import Planner

/// The change tags a plan's cache keeps packed as lines: what goes in comes out, whatever the names.
@Suite("Change tags packed as lines")
struct ChangeTagsTests {
    static let tags = [
        "milk": "1a", "caf\u{e9}": "2b", "\u{1F95B} oat": "", "e\u{301}": "3c", "with space": "4d", "": "5e",
    ]

    @Test("packed and read again, the tags are the same")
    func packedRoundTrip() throws {
        let text = try #require(ChangeTags(Self.tags).packedText)
        let packed = try #require(ChangeTags(packed: text))
        #expect(packed.dictionary == Self.tags)
        var merged = ["milk": "old", "bread": "9z"]
        packed.merge(into: &merged)
        #expect(merged == Self.tags.merging(["bread": "9z"]) { tag, _ in tag })
    }

    @Test("a name or tag holding a tab, newline or carriage return is not packed")
    func unpackable() {
        for name in ["a\tb", "a\nb", "a\r"] {
            #expect(ChangeTags([name: "1"]).packedText == nil)
            #expect(ChangeTags(["a": name]).packedText == nil)
        }
        #expect(ChangeTags(packed: "milk\t1") == nil, "a packing ends with a newline")
    }

    @Test("an update sets the changed tags and drops the deleted ones, packed or not")
    func update() throws {
        let expected = ["milk": "7", "\u{1F95B} oat": "", "e\u{301}": "3c", "with space": "4d", "": "5e", "new": "8"]
        let text = try #require(ChangeTags(Self.tags).packedText)
        let packed = try #require(ChangeTags(packed: text))
        for var tags in [packed, ChangeTags(Self.tags)] {
            tags.update(changed: ["milk": "7", "new": "8"], deleted: ["caf\u{e9}"])
            #expect(tags.dictionary == expected)
        }
    }
}
