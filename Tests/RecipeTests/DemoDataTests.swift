import Foundation
@testable import Recipe
import ShareKit
import Testing

/// Demo data for screenshots: `{{pick: […]}}`, cities held to a country or a list, shopping and to-do items.
@Suite("Demo data: picks, held cities, shopping and to-do items")
struct DemoDataTests {
    static func zone(seed: Int, _ fields: String, repeats: Int = 30) throws -> DeclaredZone {
        let yaml = """
            sharelane: 1
            name: demo
            seed: \(seed)
            users: { alice: { email: a@example.com } }
            zones:
              Trip:
                records:
                  "stop-{{i:02}}":
                    repeat: \(repeats)
                    type: Stop
                    fields: { \(fields) }
            """
        return try #require(try RecipeLoader(environment: [:]).load(yaml: yaml, file: "demo.yaml").zone("Trip"))
    }

    static func texts(_ zone: DeclaredZone, _ field: String) -> [String] {
        zone.records.compactMap {
            if case .value(.string(let text)) = $0.fields[field] { return text }
            return nil
        }
    }

    @Test("{{pick: […]}} gives only the recipe's choices, all of them over enough records, the same for the same seed")
    func pickChoosesFromTheList() throws {
        let fields = #"title: '{{pick: [Lisbon, Porto, "Faro, Algarve"]}}', mood: "{{pick: [calm, busy]}} day""#
        let first = try Self.zone(seed: 7, fields)
        let titles = Self.texts(first, "title")
        #expect(titles.count == 30)
        #expect(Set(titles) == ["Lisbon", "Porto", "Faro, Algarve"])
        #expect(Set(Self.texts(first, "mood")) == ["calm day", "busy day"])
        // The same recipe gives the same data; another seed other data.
        #expect(Self.texts(try Self.zone(seed: 7, fields), "title") == titles)
        #expect(Self.texts(try Self.zone(seed: 8, fields), "title") != titles)
    }

    @Test("fake.city, fake.country and fake.location held to a country or a list agree within a record")
    func heldCities() throws {
        let zone = try Self.zone(
            seed: 3,
            #"where: "{{fake.location(Portugal)}}", city: "{{fake.city(Portugal)}}", "#
                + #"country: "{{fake.country(Portugal)}}", other: "{{fake.city(Kyoto, Osaka, Nara)}}""#)
        let portugal = TemplateChoices.allCities.filter { $0.country == "Portugal" }
        #expect(portugal.count >= 6, "a country held has several cities")
        let cities = Self.texts(zone, "city")
        #expect(cities.count == 30)
        #expect(Set(cities).isSubset(of: Set(portugal.map(\.name))))
        #expect(Set(cities).count >= 4, "30 records in \(Set(cities))")
        #expect(Set(Self.texts(zone, "country")) == ["Portugal"])
        #expect(Set(Self.texts(zone, "other")).isSubset(of: ["Kyoto", "Osaka", "Nara"]))
        // The location, written before the city, is near that record's city.
        for record in zone.records {
            guard case .value(.string(let name)) = record.fields["city"],
                case .value(.location(let point)) = record.fields["where"],
                let city = portugal.first(where: { $0.name == name })
            else {
                Issue.record("record \(record.name) lacks its city or location")
                continue
            }
            #expect(abs(point.latitude - city.latitude) <= 0.03 && abs(point.longitude - city.longitude) <= 0.03)
        }
    }

    @Test("shopping and to-do items read as nouns, not sentences")
    func shoppingAndTodos() throws {
        let zone = try Self.zone(seed: 1, #"item: "{{fake.shopping}}", todo: "{{fake.todo}}""#)
        let items = Self.texts(zone, "item")
        let todos = Self.texts(zone, "todo")
        #expect(Set(items).isSubset(of: Set(FakeData.shopping)) && Set(items).count >= 10)
        #expect(Set(todos).isSubset(of: Set(FakeData.todos)) && Set(todos).count >= 10)
        for text in items + todos {
            #expect(!text.hasSuffix("."), "\(text) reads as a sentence")
            #expect(text.first?.isUppercase == true)
        }
    }

    @Test("unheld cities are unchanged by the held cities' list")
    func unheldCitiesFrozen() {
        // `{{fake.city}}` draws from the first 44 only: the data of recipes written before stays the same.
        #expect(FakeData.cities.count == 44)
        #expect(Array(TemplateChoices.allCities.prefix(44)).map(\.name) == FakeData.cities.map(\.name))
        #expect(Set(TemplateChoices.allCities.map(\.name)).count == TemplateChoices.allCities.count)
    }

    @Test("a malformed pick is reported at its own column, with what to write")
    func malformedPickColumn() throws {
        let yaml = """
            sharelane: 1
            name: demo
            users: { alice: { email: a@example.com } }
            zones:
              Trip:
                records:
                  stop: { type: Stop, fields: { title: "Day in {{pick: [Lisbon, Porto}}" } }
            """
        let thrown = #expect(throws: RecipeErrors.self) {
            try RecipeLoader(environment: [:]).load(yaml: yaml, file: "demo.yaml")
        }
        let errors = try #require(thrown).errors
        #expect(errors.count == 1)
        let error = try #require(errors.first)
        #expect(error.location?.line == 7)
        #expect(error.location?.column == 52, "\(error)")
        #expect(error.message.contains("square brackets"))
    }
}
