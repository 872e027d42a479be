import Foundation
@testable import Recipe
import ShareKit
import SharelaneTestSupport
import Testing

@Suite("Generated records")
struct GeneratedDataTests {
    static func recipe(seed: Int, extraRecord: Bool) -> String {
        """
        sharelane: 1
        name: generated
        seed: \(seed)
        users: { alice: { email: a@example.com } }
        zones:
          People:
            records:
              \(extraRecord ? "inserted: { type: Person, fields: { note: \"{{fake.sentence}}\" } }" : "")
              "person-{{i:03}}":
                repeat: 20
                type: Person
                fields:
                  name: "{{fake.name}}"
                  email: "{{fake.email}}"
                  motto: "{{fake.sentence}}"
                  word: "{{fake.word}} and {{fake.word}}"
                  age: "{{fake.int(18,99)}}"
                  born: "{{fake.date}}"
                  index: "{{i}}"
                  label: "Person {{i}} of 20"
              tail: { type: Person, fields: { name: "{{fake.name}}" } }
        """
    }

    static func load(seed: Int, extraRecord: Bool = false) throws -> DeclaredZone {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: recipe(seed: seed, extraRecord: extraRecord), file: "generated.yaml")
        return try #require(recipe.zone("People"))
    }

    @Test("a repeat: record gives the same records as writing each one out, fake values and all")
    func repeatEqualsWrittenOut() throws {
        func zone(_ records: String) throws -> DeclaredZone {
            let yaml = """
                sharelane: 1
                name: same
                seed: 3
                users: { alice: { email: a@example.com } }
                zones:
                  Z:
                    records:
                \(records)
                """
            return try #require(try RecipeLoader(environment: [:]).load(yaml: yaml, file: "same.yaml").zone("Z"))
        }
        // `{{i}}` exists only under repeat:, so the written-out records spell each index.
        let generated = try zone(
            """
                  "item-{{i}}":
                    repeat: 4
                    type: Item
                    fields: { note: "{{fake.sentence}}", word: "{{fake.word}}", qty: 3, price: 1.5, done: true, tag: "fixed" }
            """)
        let written = try zone(
            (1...4).map { i in
                """
                      item-\(i): { type: Item, fields: { note: "{{fake.sentence}}", word: "{{fake.word}}", qty: 3, price: 1.5, done: true, tag: "fixed" } }
                """
            }.joined(separator: "\n"))
        #expect(generated.records.map(\.name) == ["item-1", "item-2", "item-3", "item-4"])
        #expect(generated.records.map(\.name) == written.records.map(\.name))
        #expect(generated.records.map(\.fields) == written.records.map(\.fields))
        #expect(generated.records.map(\.type) == written.records.map(\.type))
        // The fake values differ from record to record.
        #expect(Set(generated.records.compactMap { $0.fields["note"] }).count > 1)
    }

    @Test("repeat expands {{i}} and {{i:03}}, and single placeholders keep their type")
    func expansion() throws {
        let zone = try Self.load(seed: 1)
        #expect(zone.records.count == 21)
        #expect(zone.records.first?.name == "person-001")
        #expect(zone.records[19].name == "person-020")
        let first = zone.records[0].fields
        #expect(first["index"] == .value(.int64(1)))
        #expect(first["label"] == .value(.string("Person 1 of 20")))
        guard case .value(.int64(let age)) = first["age"] else {
            Issue.record("age is INT64")
            return
        }
        #expect((18...99).contains(age))
        guard case .value(.timestamp(let born)) = first["born"] else {
            Issue.record("born is TIMESTAMP")
            return
        }
        #expect(born >= 1_577_836_800_000 && born < 1_893_456_000_000)
        guard case .value(.string(let email)) = first["email"], case .value(.string(let words)) = first["word"] else {
            Issue.record("email and word are STRING")
            return
        }
        #expect(email.contains("@example."))
        #expect(words.contains(" and "))
        // Different records get different values.
        let names = Set(zone.records.prefix(20).map { $0.fields["motto"] })
        #expect(names.count > 15)
    }

    @Test("the same recipe loads to identical state")
    func sameTwice() throws {
        #expect(try Self.load(seed: 42) == Self.load(seed: 42))
    }

    @Test("inserting a record leaves every other generated value unchanged")
    func insertion() throws {
        let before = try Self.load(seed: 42)
        let after = try Self.load(seed: 42, extraRecord: true)
        #expect(after.records.count == before.records.count + 1)
        let afterByName = Dictionary(uniqueKeysWithValues: after.records.map { ($0.name, $0.fields) })
        for record in before.records {
            #expect(afterByName[record.name] == record.fields, "\(record.name) changed")
        }
    }

    @Test("a different seed changes the generated values")
    func seedMatters() throws {
        let a = try Self.load(seed: 1)
        let b = try Self.load(seed: 2)
        let differing = zip(a.records, b.records).filter { $0.fields["name"] != $1.fields["name"] }
        #expect(differing.count > 15)
        // Values that are not random do not change.
        #expect(a.records.map(\.name) == b.records.map(\.name))
        #expect(a.records[4].fields["index"] == b.records[4].fields["index"])
    }

    @Test("generated values are the same on every machine and run (pinned)")
    func pinned() throws {
        // These strings only change if the stable hash, the generator or the word lists change; that would
        // change every user's demo data, so it must be deliberate.
        let zone = try Self.load(seed: 42)
        let fields = zone.records[0].fields
        let name = fields["name"]
        let age = fields["age"]
        #expect(name == .value(.string(Self.pinnedName)), "got \(String(describing: name))")
        #expect(age == .value(.int64(Self.pinnedAge)), "got \(String(describing: age))")
    }

    static func trips(_ fields: String, repeat count: Int? = 3) throws -> DeclaredZone {
        let yaml = """
            sharelane: 1
            name: trips
            seed: 7
            users: { ana: { email: ana@example.com } }
            zones:
              Trips:
                records:
                  "\(count == nil ? "stop" : "stop-{{i}}")":
                    \(count.map { "repeat: \($0)" } ?? "")
                    type: Stop
                    fields: { \(fields) }
            """
        return try #require(try RecipeLoader(environment: [:]).load(yaml: yaml, file: "trips.yaml").zone("Trips"))
    }

    @Test("dates and numbers count from the index: date(START + COUNT UNIT) and A*i+B")
    func countedFromTheIndex() throws {
        let zone = try Self.trips(
            #"day: "{{date(2026-06-01 + i days)}}", at: "{{date(2026-06-01T09:30 + 2*i hours)}}", "#
                + #"back: "{{date(2026-06-30T00:00:00Z - i weeks)}}", order: "{{i*10}}", left: "{{100 - 5*i}}", "#
                + #"label: "Stop {{2*i-1}}""#)
        let day = 86_400_000 as Int64
        let june1: Int64 = 1_780_272_000_000  // 2026-06-01T00:00:00Z
        for (offset, record) in zone.records.enumerated() {
            let i = Int64(offset + 1)
            #expect(record.fields["day"] == .value(.timestamp(june1 + i * day)), "\(record.name)")
            #expect(
                record.fields["at"] == .value(.timestamp(june1 + 9 * 3_600_000 + 30 * 60_000 + 2 * i * 3_600_000)))
            #expect(record.fields["back"] == .value(.timestamp(june1 + 29 * day - i * 7 * day)))
            #expect(record.fields["order"] == .value(.int64(10 * i)))
            #expect(record.fields["left"] == .value(.int64(100 - 5 * i)))
            #expect(record.fields["label"] == .value(.string("Stop \(2 * i - 1)")))
        }
    }

    @Test("a city, its country and a location near it agree within a record and vary between records")
    func placesAgreeWithinARecord() throws {
        let zone = try Self.trips(
            #"city: "{{fake.city}}", country: "{{fake.country}}", where: "{{fake.location}}", "#
                + #"title: "{{fake.place}} in {{fake.city}}", note: "{{fake.sentence}}""#, repeat: 12)
        var cities = Set<String>()
        for record in zone.records {
            guard case .value(.string(let city)) = record.fields["city"],
                case .value(.string(let country)) = record.fields["country"],
                case .value(.location(let point)) = record.fields["where"],
                case .value(.string(let title)) = record.fields["title"],
                case .value(.string(let note)) = record.fields["note"]
            else {
                Issue.record("\(record.name): \(record.fields)")
                continue
            }
            cities.insert(city)
            let known = try #require(FakeData.cities.first { $0.name == city }, "\(city) is no city of the list")
            #expect(country == known.country)
            #expect(abs(point.latitude - known.latitude) <= 0.02 && abs(point.longitude - known.longitude) <= 0.02)
            #expect(title.hasSuffix(" in \(city)"), "\(title)")
            // A sentence starts with a capital, ends with a full stop, and is words, not a list of nouns.
            #expect(note.first?.isUppercase == true && note.hasSuffix(".") && note.contains(" the "), "\(note)")
        }
        #expect(cities.count >= 6, "12 records in \(cities.count) cities")
    }

    @Test("a wrong date or arithmetic placeholder is refused with the form to write")
    func wrongArithmetic() throws {
        let cases: [(String, Int?, String)] = [
            (#"day: "{{date(2026-13-01)}}""#, 3, "`2026-13-01` is no date; write START as 2026-06-01"),
            (#"day: "{{date(2026-02-29 + i days)}}""#, 3, "`2026-02-29` is no date"),
            (#"day: "{{date(2026-06-01 * i days)}}""#, 3, "write `date(START)`, `date(START + COUNT UNIT)`"),
            (#"day: "{{date(2026-06-01 + i fortnights)}}""#, 3, "UNIT minutes, hours, days or weeks"),
            (#"n: "{{i*i}}""#, 3, "arithmetic on the index is `A*i+B`"),
            (#"n: "{{i*10}}""#, nil, "`{{i*10}}` is only defined in a record with `repeat:`"),
            (#"day: "{{date(2026-06-01 + i days)}}""#, nil, "counts with `i`, only defined in a record with `repeat:`"),
            (#"n: "{{fake.citty}}""#, 3, "did you mean `{{fake.city}}`?"),
        ]
        for (fields, count, message) in cases {
            #expect(throws: (any Error).self, "\(fields)") { try Self.trips(fields, repeat: count) }
            do {
                _ = try Self.trips(fields, repeat: count)
            } catch {
                #expect("\(error)".contains(message), "\(fields): \(error)")
                #expect("\(error)".contains("trips.yaml:"), "\(error)")
            }
        }
    }

    @Test("the screenshot recipe of Docs/RecipeFormat.md loads: a stop a day, each somewhere, notes that read")
    func theDocumentedScreenshotRecipe() throws {
        let document = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Docs/RecipeFormat.md"), encoding: .utf8)
        let begin = try #require(document.range(of: "<!-- screenshot-recipe:begin -->\n```yaml\n"))
        let end = try #require(document.range(of: "```\n<!-- screenshot-recipe:end -->"))
        let yaml = String(document[begin.upperBound..<end.lowerBound])
        let recipe = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "RecipeFormat.md")
        let stops = try #require(recipe.zone("Summer")).records
        #expect(stops.count == 14)
        let arrivals = stops.compactMap { stop -> Int64? in
            guard case .value(.timestamp(let ms)) = stop.fields["arrives"] else { return nil }
            return ms
        }
        #expect(arrivals.count == 14)
        #expect(zip(arrivals, arrivals.dropFirst()).allSatisfy { $1 - $0 == 86_400_000 }, "a day apart")
        let titles = Set(stops.compactMap { if case .value(.string(let t)) = $0.fields["title"] { t } else { nil } })
        #expect(titles.count == 14)
        #expect(stops.allSatisfy { if case .value(.location) = $0.fields["where"] { true } else { false } })
    }

    static let pinnedName = "Keiko Haddad"
    static let pinnedAge: Int64 = 37
}
