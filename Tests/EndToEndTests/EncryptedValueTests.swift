import Foundation
import SharelaneTestSupport
import Testing

/// The values of `ENCRYPTED` fields in the plans that leave the terminal: a markdown plan posted on a pull
/// request and a JSON plan handed to a script hide them unless asked; the text plan shows them.
@Suite struct EncryptedValueTests {
    static let recipe = """
        sharelane: 1
        name: house
        users: { ann: { email: ann@example.com } }
        owner: ann
        schema:
          Home:
            secretNote: ENCRYPTED STRING
        zones:
          House:
            records:
              front: { type: Home, fields: { title: Front door, secretNote: "Door code 4711" } }

        """

    @Test func markdownAndJSONPlansHideEncryptedValuesUnlessAsked() async throws {
        let scratch = try TemporaryDirectory("e2e-encrypted")
        let recipe = try scratch.write("house.yaml", Self.recipe)
        let store = ["--store", "memory:"]
        for format in ["markdown", "json"] {
            let hidden = try await SharelaneBinary.run(["plan", recipe, "--format", format] + store)
            #expect(hidden.status == 0, "\(hidden.output)")
            #expect(!hidden.output.contains("4711"), "\(format): \(hidden.stdout)")
            #expect(hidden.stdout.contains("(encrypted; --show-encrypted shows it)"), "\(format): \(hidden.stdout)")
            #expect(hidden.stdout.contains("Front door"), "other fields are shown: \(hidden.stdout)")
            let shown = try await SharelaneBinary.run(["plan", recipe, "--format", format, "--show-encrypted"] + store)
            #expect(shown.stdout.contains("Door code 4711"), "\(format): \(shown.stdout)")
        }
        let text = try await SharelaneBinary.run(["plan", recipe] + store)
        #expect(text.stdout.contains("Door code 4711"), "the terminal's own plan shows them: \(text.stdout)")
        // A change of the value is hidden on both sides.
        let db = ["--store", scratch.file("house.sqlite")]
        #expect(try await SharelaneBinary.run(["apply", recipe, "--yes"] + db).status == 0)
        _ = try scratch.write("house.yaml", Self.recipe.replacingOccurrences(of: "4711", with: "8080"))
        let changed = try await SharelaneBinary.run(["plan", recipe, "--format", "markdown"] + db)
        #expect(!changed.stdout.contains("4711") && !changed.stdout.contains("8080"), "\(changed.stdout)")
        #expect(changed.stdout.contains("secretNote"), "\(changed.stdout)")
    }
}
