import CloudKitWire
import Foundation
import JSONText
import ShareKit
import Testing

@testable import PlanModel
@testable import Planner

/// One `Double` is one text in every JSON sharelane writes: a wire body, a saved plan's line, a JSON plan.
@Suite("One rule for writing a Double")
struct DoubleRuleTests {
    static let doubles: [Double] = [3, -0.0, 0, 420.5, 0.1, 1.0 / 3, 1e20, 1e-7, 5e-324, -1.7976931348623157e308]

    /// The first number written after `"price"` in `text`.
    static func price(in text: String) -> String? {
        guard let field = text.range(of: "\"price\"") else { return nil }
        return text[field.upperBound...].firstMatch(of: /-?[0-9][0-9.eE+\-]*/).map { String($0.output) }
    }

    static func plan(_ value: Double) -> Plan {
        Plan(
            recipeName: "r", storeName: "s",
            owner: PlannedUser(handle: "alice", email: "alice@example.com", recordName: "_alice"),
            changes: [
                PlannedChange(
                    action: .create, kind: .record, address: "record Lists/milk", zoneName: "Lists", recordName: "milk",
                    attributes: [
                        AttributeChange(name: "type", isField: false, before: nil, after: .text("Item")),
                        AttributeChange(name: "price", isField: true, before: nil, after: .value(.double(value))),
                    ],
                    record: PlannedRecord(
                        recordType: "Item", parent: nil, fields: ["price": .value(.double(value))], operation: .create))
            ], basis: LiveBasis(zones: [ZoneBasis(zoneName: "Lists", exists: true, tags: [:])]))
    }

    @Test("the wire writer, the saved plan and the JSON plan write each double alike, whole ones with .0")
    func everyWriterAlike() throws {
        for value in Self.doubles {
            var record = WireRecord(recordName: "milk", recordType: "Item")
            record.fields = ["price": WireField(.double(value))]
            let wire = String(
                decoding: try WireRecordWriter.encode(RecordsResponse(records: [record], continuationMarker: nil)),
                as: UTF8.self)
            let saved = String(decoding: try SavedPlan.encoded(Self.plan(value)), as: UTF8.self)
            let rendered = JSONPlanRenderer().render(Self.plan(value))
            let texts = [Self.price(in: wire), Self.price(in: saved), Self.price(in: rendered)]
            #expect(texts == Array(repeating: JSONNumber.text(value), count: 3), "\(value): \(texts)")
            #expect(texts.allSatisfy { $0.flatMap(Double.init) == value })
        }
        #expect(JSONNumber.text(3) == "3.0")
        #expect(JSONNumber.text(-0.0) == "-0.0")
    }

    @Test("NaN and the infinities are the strings that name them in a saved plan and a JSON plan, and read back")
    func nonFinite() throws {
        for value in [Double.infinity, -.infinity] {
            let rendered = JSONPlanRenderer().render(Self.plan(value))
            #expect(rendered.contains("\"price\" : \"\(JSONNumber.nonFiniteName(value))\""))
            #expect((try? JSONSerialization.jsonObject(with: Data(rendered.utf8))) != nil)
            let read = try SavedPlan.decoded(try SavedPlan.encoded(Self.plan(value)))
            #expect(read.changes.first?.record?.fields["price"] == .value(.double(value)))
        }
        #expect(JSONPlanRenderer().render(Self.plan(.nan)).contains("\"price\" : \"NaN\""))
    }
}
