import Foundation
import Recipe
import ShareKit
import SharelaneTestSupport
import Testing

@testable import Planner

/// The declared records a plan's cache keeps per zone come back exactly as the recipe declared them: a plan
/// of an unchanged recipe plans from them.
@Suite("Declared record files")
struct DeclaredRecordFileTests {
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("declared-records")
    }

    static let location = SourceLocation(file: "dir\\with\ttab/recipe.yaml", line: 12, column: 7)

    /// Records the compact form holds (text with tabs, newlines, "\r\n", backslashes and emoji; integers at
    /// their limits; doubles with every bit kept) and records it does not (a share, a list, a `!share-url`).
    static let records: [DeclaredRecord] = [
        DeclaredRecord(
            name: "plain", type: "Item",
            fields: ["title": .value(.string("Milk")), "qty": .value(.int64(3)), "price": .value(.double(1.5))],
            location: location),
        DeclaredRecord(
            name: "odd text", type: "Ty\tpe",
            fields: [
                "a\tb": .value(.string("line\none\r\nback\\slash\\t not a tab 🐑")), "": .value(.string("")),
                "min": .value(.int64(.min)), "max": .value(.int64(.max)),
                "tiny": .value(.double(-0.0)), "pi": .value(.double(.pi)), "big": .value(.double(1e308)),
            ], parent: "root\\name", absent: true, location: location),
        DeclaredRecord(
            name: "shared", type: "List",
            fields: ["tags": .value(.list(elementType: .string, [.string("a"), .string("b")]))],
            share: .share(DeclaredShare(title: "T", location: location)), location: location),
        DeclaredRecord(
            name: "linked", type: "Card", fields: ["url": .shareURL(zone: "Lists", record: nil)],
            location: location),
    ]

    @Test("every record comes back as declared, and a lookup by name reads only those")
    func roundTrip() throws {
        DeclaredRecordFile.write(Self.records, directory: scratch.url, digest: "abc")
        let file = DeclaredRecordFile(directory: scratch.url, digest: "abc")
        #expect(file.records() == Self.records)
        #expect(file.records(named: ["linked", "odd text"]) == [Self.records[1], Self.records[3]])
        #expect(file.records(named: ["nothing"]) == [])
        let text = try String(contentsOf: file.url, encoding: .utf8)
        #expect(text.split(separator: "\n").count == Self.records.count, "one line a record:\n\(text)")
    }

    @Test("a damaged file reads as none, and files of other digests are removed")
    func damagedAndRemoved() throws {
        DeclaredRecordFile.write(Self.records, directory: scratch.url, digest: "keep")
        DeclaredRecordFile.write(Self.records, directory: scratch.url, digest: "old")
        let damaged = DeclaredRecordFile(directory: scratch.url, digest: "damaged")
        try "plain\tC\tItem\n".write(to: damaged.url, atomically: true, encoding: .utf8)
        #expect(damaged.records() == nil)
        // A compact line whose parent mark, line number, field kind or number is not one.
        for line in [
            "n\tC\tItem\t*\t0\tf\t1\t2", "n\tC\tItem\t-\t0\tf\tone\t2", "n\tC\tItem\t-\t0\tf\t1\t2\tqty\tq\t3",
            "n\tC\tItem\t-\t0\tf\t1\t2\tqty\tii\t3", "n\tC\tItem\t-\t0\tf\t1\t2\tqty\ti\tthree",
            "n\tC\tItem\t-\t0\tf\t1\t2\tqty\td\t1.5", "n\tC\tItem\t-\t0\tf\t1\t2\tqty\ts",
        ] {
            try (line + "\n").write(to: damaged.url, atomically: true, encoding: .utf8)
            #expect(damaged.records() == nil, "\(line)")
        }
        try "n\tC\tItem\t-\t0\tf\t1\t2\tqty\ti\t-3\n".write(to: damaged.url, atomically: true, encoding: .utf8)
        #expect(damaged.records()?.first?.fields["qty"] == .value(.int64(-3)), "and the line they spoil does")
        // What a write stopped between its own file and the rename leaves, and a file of an older format.
        try "half".write(
            to: scratch.url.appendingPathComponent(".keep.v1.jsonl.1234.partial"), atomically: false, encoding: .utf8)
        try "plain\tC\tItem\n".write(
            to: scratch.url.appendingPathComponent("keep.jsonl"), atomically: true, encoding: .utf8)
        DeclaredRecordFile.removeAll(in: scratch.url, except: ["keep"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) == ["keep.v1.jsonl"])
    }

    @Test("a cache file is replaced whole, and nothing else is left beside it")
    func replacedWhole() throws {
        let url = scratch.url.appendingPathComponent("memo.json")
        #expect(CacheFileWriting.replace(url, with: Data("first".utf8)))
        #expect(CacheFileWriting.replace(url, with: Data("second, longer".utf8)))
        #expect(try String(contentsOf: url, encoding: .utf8) == "second, longer")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) == ["memo.json"])
        let nowhere = scratch.url.appendingPathComponent("missing/memo.json")
        #expect(!CacheFileWriting.replace(nowhere, with: Data("x".utf8)), "a folder that does not exist")
    }
}
