import Foundation
import Recipe
import ShareKit
import Testing

/// `schema:` in recipes, inference from records, and the `.ckdb` reader and writer.
@Suite struct SchemaRecipeTests {
    func load(_ yaml: String) throws -> Recipe { try RecipeLoader(environment: [:]).load(yaml: yaml, file: "s.yaml") }

    func problems(_ yaml: String) -> [String] {
        do {
            _ = try load(yaml)
            return []
        } catch let error as RecipeErrors {
            return error.errors.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test("one wrong value among many is one error, at it, naming the minority: not one per correct record")
    func oneWrongValueAmongMany() throws {
        let recipe = """
            sharelane: 1
            name: s
            users: { alice: { email: alice@example.com } }
            zones:
              Household:
                records:
                  first: { type: Item, fields: { qty: "2" } }
                  second: { type: Item, fields: { qty: 3 } }
                  "item-{{i}}": { repeat: 200, type: Item, fields: { qty: 1 } }
            """
        #expect(
            problems(recipe) == [
                "s.yaml:7:7: error: field `qty` of `Item`: 1 STRING value at 7:7 (record `first`) against 201 INT64 "
                    + "values; a field keeps one type in CloudKit: write it as INT64 (a whole number, or "
                    + "`{type: INT64, value: …}`)"
            ])
        // The other way round: one DOUBLE makes every qty a DOUBLE, which is said.
        let loaded = try load(recipe.replacingOccurrences(of: "qty: \"2\"", with: "qty: 1.5"))
        #expect(
            loaded.warnings.map(\.description) == [
                "s.yaml:7:7: warning: field `qty` of `Item` is DOUBLE for all 202 values because of 1 DOUBLE value at "
                    + "7:7; the 201 whole numbers become DOUBLE too. If qty is a whole number, write that value as one; "
                    + "if not, declare `qty: DOUBLE` under `schema: Item:` to say so"
            ])
    }

    @Test("the records of one repeat: are one place in the message, not the same line and column again and again")
    func repeatedRecordsAreOnePlace() {
        let found = problems(
            """
            sharelane: 1
            name: s
            users: { alice: { email: alice@example.com } }
            zones:
              Days:
                records:
                  "day-{{i}}": { repeat: 6, type: Day, fields: { n: "day {{i}}" } }
                  a: { type: Day, fields: { n: 1 } }
                  b: { type: Day, fields: { n: 2 } }
                  c: { type: Day, fields: { n: 3 } }
                  d: { type: Day, fields: { n: 4 } }
                  e: { type: Day, fields: { n: 5 } }
                  f: { type: Day, fields: { n: 6 } }
                  g: { type: Day, fields: { n: 7 } }
            """)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.contains("6 STRING values at 7:7") == true, "\(found)")
        #expect(found.first?.contains("7:7, 7:7") == false, "\(found)")
        #expect(found.first?.contains("more") == false, "\(found)")
    }

    @Test("two records of one type that disagree on a field's type are reported at the later record")
    func recordsThatDisagree() {
        let found = problems(
            """
            sharelane: 1
            name: s
            users: { alice: { email: alice@example.com } }
            zones:
              Trips:
                records:
                  hotel: { type: Cost, fields: { amount: 420.5 } }
                  flight: { type: Cost, fields: { amount: { type: INT64, value: 500 } } }
                  train: { type: Cost, fields: { amount: "90" } }
            """)
        #expect(
            found == [
                "s.yaml:8:7: error: field `amount` of `Cost`: 1 INT64 value at 8:7 (record `flight`) against 1 DOUBLE "
                    + "value; a field keeps one type in CloudKit: write it as DOUBLE (e.g. `500.0`, or "
                    + "`{type: DOUBLE, value: 500}`)",
                "s.yaml:9:7: error: field `amount` of `Cost`: 1 STRING value at 9:7 (record `train`) against 1 DOUBLE "
                    + "value; a field keeps one type in CloudKit: write it as DOUBLE (e.g. `500.0`, or "
                    + "`{type: DOUBLE, value: 500}`)",
            ])
    }

    @Test("a plain whole number is a DOUBLE where the schema or another record makes the field DOUBLE, in any order")
    func wholeNumbersForDoubleFields() throws {
        let recipe = try load(
            """
            sharelane: 1
            name: s
            users: { alice: { email: alice@example.com } }
            schema:
              Day: { start: TIMESTAMP QUERYABLE SORTABLE, km: DOUBLE }
            zones:
              Trips:
                records:
                  flight: { type: Cost, fields: { amount: 500, tags: [1, 2] } }
                  hotel: { type: Cost, fields: { amount: 420.5, tags: [0.5], nights: 3 } }
                  day-1: { type: Day, fields: { km: 30, start: 1714550400000 } }
            lanes:
              demo:
                steps:
                  - save: { zone: Trips, record: taxi, type: Cost, fields: { amount: 30, nights: 1 } }
            """)
        let records = Dictionary(uniqueKeysWithValues: recipe.zones[0].records.map { ($0.name, $0.fields) })
        #expect(records["flight"]?["amount"] == .value(.double(500)))
        #expect(records["flight"]?["tags"] == .value(.list(elementType: .double, [.double(1), .double(2)])))
        #expect(records["hotel"]?["nights"] == .value(.int64(3)))
        #expect(records["day-1"]?["km"] == .value(.double(30)))
        #expect(records["day-1"]?["start"] == .value(.timestamp(1_714_550_400_000)))
        #expect(recipe.schema.schema.field("amount", of: "Cost")?.type == .double)
        guard case .save(_, _, _, _, let fields) = recipe.lanes.first?.steps.first?.action else {
            Issue.record("the lane's step is not a save")
            return
        }
        #expect(fields["amount"] == .value(.double(30)))
        #expect(fields["nights"] == .value(.int64(1)))
    }

    @Test(
        "a lane step's field that contradicts the recipe's schema is reported at the step, unless it expects the refusal"
    )
    func laneStepsCheckedAgainstTheSchema() {
        let found = problems(
            """
            sharelane: 1
            name: s
            users: { alice: { email: alice@example.com } }
            schema:
              Cost: { amount: DOUBLE }
            zones:
              Trips:
                records:
                  hotel: { type: Cost, fields: { amount: 420 } }
            lanes:
              demo:
                steps:
                  - save: { zone: Trips, record: taxi, type: Cost, fields: { amount: cheap } }
                  - save: { zone: Trips, record: bus, type: Cost, fields: { amount: { type: INT64, value: 3 } } }
                  - save: { zone: Trips, record: tram, type: Cost, fields: { amount: free }, expect_error: BAD_REQUEST }
            """)
        #expect(
            found == [
                "s.yaml:13:9: error: field `amount` of record `taxi` is STRING, but the schema declares Cost.amount "
                    + "DOUBLE (s.yaml:5:19); a field keeps one type in CloudKit: write the value as DOUBLE (e.g. "
                    + "`500.0`, or `{type: DOUBLE, value: 500}`)",
                "s.yaml:14:9: error: field `amount` of record `bus` is INT64, but the schema declares Cost.amount "
                    + "DOUBLE (s.yaml:5:19); a field keeps one type in CloudKit: write the value as DOUBLE (e.g. "
                    + "`500.0`, or `{type: DOUBLE, value: 500}`)",
            ])
    }

    @Test("a record that contradicts the declared schema, and a bad declaration, are reported where they are")
    func contradictingTheDeclaredSchema() {
        let found = problems(
            """
            sharelane: 1
            name: s
            users: { alice: { email: alice@example.com } }
            schema:
              Cost:
                amount: DOUBLE QUERYABLE
                note: ENCRYPTED STRING QUERYABLE
                ___recordID: STRING
            zones:
              Trips:
                records:
                  hotel: { type: Cost, fields: { amount: cheap } }
            """)
        #expect(found.count == 3, "\(found)")
        #expect(
            found.contains {
                $0.hasPrefix("s.yaml:7:11: error: field `note` of `Cost`: an ENCRYPTED field cannot be indexed")
            })
        #expect(
            found.contains {
                $0.hasPrefix(
                    "s.yaml:8:18: error: field `___recordID` of `Cost`: the system field `___recordID` is REFERENCE")
            })
        #expect(
            found.contains {
                $0.hasPrefix(
                    "s.yaml:12:7: error: field `amount` of `Cost`: 1 STRING value at 12:7 (record `hotel`), but the schema declares Cost.amount DOUBLE (s.yaml:6:13)"
                )
            })
    }

    @Test("the schema is the declared one plus what records imply, with development's default indexes")
    func inference() throws {
        let recipe = try load(
            """
            sharelane: 1
            name: s
            users: { alice: { email: alice@example.com } }
            schema:
              Todo:
                qty: INT64 QUERYABLE
            zones:
              Lists:
                share: { participants: {} }
                records:
                  milk: { type: Todo, fields: { title: Milk, qty: 2, tags: [a, b] } }
            """)
        let schema = recipe.schema.schema
        #expect(schema.field("qty", of: "Todo")?.indexes == .queryable)
        #expect(schema.field("title", of: "Todo")?.indexes == [.queryable, .sortable, .searchable])
        #expect(schema.field("tags", of: "Todo")?.type == .stringList)
        #expect(schema.recordTypes["cloudkit.share"] != nil)
    }

    @Test("the .ckdb writer's text reads back to the same schema; comments, roles and grants are passed over")
    func ckdbRoundTrip() throws {
        let schema = Schema(recordTypes: [
            RecordTypeSchema(
                "Fasting",
                fields: [
                    SchemaField("___recordID", .reference, indexes: .queryable),
                    SchemaField("endDate", .timestamp, indexes: [.queryable, .sortable]),
                    SchemaField("note", .string, isEncrypted: true), SchemaField("photo", .assetID),
                    SchemaField("tags", .stringList, indexes: .queryable),
                    SchemaField("grant", .string, indexes: .searchable),
                ]),
            RecordTypeSchema("cloudkit.share", fields: SchemaRules.shareTypeFields),
        ])
        let text = SchemaLanguage.text(schema)
        #expect(text.contains("        \"grant\" STRING SEARCHABLE,"))
        #expect(text.contains("        photo ASSET,"))
        #expect(text.contains("        tags LIST<STRING> QUERYABLE,"))
        #expect(try SchemaLanguage.schema(from: text, file: "f.ckdb") == schema)
        let commented =
            "-- exported\nDEFINE SCHEMA\n  CREATE ROLE editor;\n  /* a type */ RECORD TYPE T (n NUMBER PREFERRED AS DOUBLE, // x\n  GRANT READ, WRITE TO editor);\n"
        #expect(
            try SchemaLanguage.schema(from: commented, file: "g.ckdb")
                == Schema(recordTypes: [RecordTypeSchema("T", fields: [SchemaField("n", .double)])]))
    }
}
