import Foundation
import SharelaneTestSupport
import Recipe
import ShareKit
import Testing

/// One fixture per field value form; each states the CloudKit type and the value field `v` of record `r`
/// must become (`# type:` and `# value:`).
@Suite("Field value forms")
struct ValueFormTests {
    /// A rendering that shows exactly what a value holds (timestamps as milliseconds, references with zone and action).
    static func render(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): return s
        case .int64(let i): return String(i)
        case .double(let d): return String(d)
        case .timestamp(let ms): return String(ms)
        case .bytes(let d): return d.base64EncodedString()
        case .reference(let r): return "ref(\(r.recordName), zone \(r.zoneID?.zoneName ?? "-"), \(r.action.rawValue))"
        case .assetID(let a): return "asset(\(a))"
        case .location(let l): return "location(\(l.latitude), \(l.longitude))"
        case .list(_, let values): return "[" + values.map(render).joined(separator: ", ") + "]"
        }
    }

    @Test("becomes the declared CloudKit type and value", arguments: try Fixtures.names(in: "values"))
    func valueForm(_ name: String) throws {
        let url = try Fixtures.url("values", name)
        let type = try #require(try Fixtures.header("type", in: url).first)
        let value = try #require(try Fixtures.header("value", in: url).first)
        let recipe = try RecipeLoader(environment: [:]).load(path: url.path)
        let record = try #require(recipe.zone("Z")?.records.first { $0.name == "r" })
        let field = try #require(record.fields["v"])
        switch field {
        case .value(let v):
            #expect(v.type.rawValue == type)
            #expect(Self.render(v) == value)
        case .shareURL(let zone, let recordName):
            // A share URL is a STRING once the store hands out the URL.
            #expect(type == "STRING")
            #expect("share-url(\(zone)\(recordName.map { "/\($0)" } ?? ""))" == value)
        }
    }

    @Test("YAML 1.1 words yes/no are booleans, quoted they are text")
    func yesNo() throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: """
                sharelane: 1
                name: yes-no
                users: { alice: { email: a@example.com } }
                zones: { Z: { records: { r: { type: T, fields: { a: yes, b: "no", c: null-ish } } } } }
                """, file: "yes-no.yaml")
        let fields = try #require(recipe.zones.first?.records.first?.fields)
        #expect(fields["a"] == .value(.int64(1)))
        #expect(fields["b"] == .value(.string("no")))
        #expect(fields["c"] == .value(.string("null-ish")))
    }
}

extension ValueFormTests {
    @Test("an asset value leads back to its file")
    func assetPath() throws {
        let url = try Fixtures.url("values", "asset")
        let recipe = try RecipeLoader(environment: [:]).load(path: url.path)
        guard case .value(.assetID(let id)) = recipe.zone("Z")?.records.first(where: { $0.name == "r" })?.fields["v"]
        else {
            Issue.record("v is an ASSETID")
            return
        }
        let path = try #require(recipe.assetPath(for: id))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "sharelane asset fixture\n")
        #expect(recipe.assetPath(for: "not-an-asset") == nil)
    }
}
