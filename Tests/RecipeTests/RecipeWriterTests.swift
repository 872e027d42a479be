import Foundation
import Recipe
import ShareKit
import Testing

/// The writer gives back what the reader reads: writing a loaded recipe and loading the text again gives the
/// same declared state, and writing that gives the same text.
@Suite struct RecipeWriterTests {
    static let source = """
        sharelane: 1
        name: every-part
        container: iCloud.com.example.Lists
        environment: production
        users:
          alice: {email: alice@example.com, name: Alice}
          bob: {email: bob@example.com}
          carol.s: {email: carol@example.com}
        owner: alice
        zones:
          Lists:
            prune: true
            share:
              title: "Lists: shared"
              public_permission: none
              participants:
                bob: {permission: read-write, role: administrator}
                carol.s: {permission: read-only, accepted: false}
            records:
              groceries:
                type: List
                fields:
                  title: "yes"
                  count: 3
                  ratio: 1.5
                  big: {type: DOUBLE, value: "1e+20"}
                  when: 2024-05-01T09:00:00.250Z
                  raw: !bytes AAEC
                  template: 'costs $${PRICE} {{"{{"}} n }}'
                  link: !share-url Trips/italy
                  tags: [a, "b c"]
                  empty: {type: INT64_LIST, value: []}
                  place: {latitude: 1.5, longitude: 2.5, altitude: 3.0}
                children:
                  milk:
                    type: Item
                    fields: {list: !ref groceries, keep: {ref: groceries, action: delete-self}}
              orphan: {type: Item, parent: gone}
              gone: {type: Missing, absent: true}
          Trips:
            share: none
            records:
              italy:
                type: Trip
                share:
                  public_permission: read-only
                  stable_url: true
        public:
          records:
            notice: {type: Notice, fields: {text: hello}}
        """

    @Test func aWrittenRecipeReadsBackToTheSameState() throws {
        let loader = RecipeLoader(environment: [:])
        let first = try loader.load(yaml: Self.source, file: "every-part.yaml")
        let text = RecipeWriter().yaml(first)
        let second = try loader.load(yaml: text, file: "every-part.yaml")
        #expect(RecipeWriter().yaml(second) == text)

        #expect(second.container == "iCloud.com.example.Lists")
        #expect(second.environment == .production)
        #expect(second.users.map(\.handle) == ["alice", "bob", "carol.s"])
        let lists = try #require(second.zone("Lists"))
        #expect(lists.prune)
        guard case .share(let share)? = lists.share else {
            Issue.record("the zone-wide share did not come back")
            return
        }
        #expect(share.title == "Lists: shared")
        #expect(share.participants.map(\.role) == [.administrator, .privateUser])
        #expect(share.participants.map(\.accepted) == [true, false])
        let records = Dictionary(uniqueKeysWithValues: lists.records.map { ($0.name, $0) })
        #expect(records["milk"]?.parent == "groceries")
        #expect(records["orphan"]?.parent == "gone")
        #expect(records["gone"]?.absent == true)
        let groceries = try #require(records["groceries"])
        #expect(groceries.fields["title"] == .value(.string("yes")))
        #expect(groceries.fields["template"] == .value(.string("costs ${PRICE} {{ n }}")))
        #expect(groceries.fields["big"] == .value(.double(1e20)))
        #expect(groceries.fields["when"] == .value(.timestamp(1_714_554_000_250)))
        #expect(groceries.fields["link"] == .shareURL(zone: "Trips", record: "italy"))
        #expect(second.zone("Trips")?.share == ShareDeclaration.none)
        guard case .share(let italy)? = second.zone("Trips")?.records.first?.share else {
            Issue.record("the hierarchy share did not come back")
            return
        }
        #expect(italy.stableURL && italy.publicPermission == .readOnly)
        #expect(second.publicRecords.map(\.name) == ["notice"])
    }

    @Test func stringsThatReadAsOtherTypesAreQuoted() {
        #expect(RecipeWriter.string("plain words") == "plain words")
        for word in ["yes", "no", "null", "~", "12", "1.5", "2024-05-01", "-x", " lead", "trail "] {
            #expect(RecipeWriter.string(word).hasPrefix("\""), "\(word) must be quoted")
        }
        #expect(RecipeWriter.string("a ${B}") == "\"a $${B}\"")
    }
}
