import Foundation
import SharelaneTestSupport
import Testing

/// A participant saves a record whose `VALIDATE` reference points outside what is shared with them: the
/// reference the owner wrote is kept, not checked again (to the participant its target does not exist); one the
/// participant writes to such a target is refused, as for a target that does not exist.
@Suite struct KeptReferenceTests {
    @Test func aParticipantChangesAnotherFieldOfARecordWhoseReferenceTheyCannotRead() async throws {
        let directory = try TemporaryDirectory("kept-reference")
        let recipe = try directory.write(
            "check.yaml",
            """
            sharelane: 1
            name: check
            owner: alice
            users:
              alice: { email: alice@example.com }
              bob: { email: bob@example.com }
            zones:
              Z1:
                records:
                  r1:
                    type: Item
                    share:
                      participants:
                        bob: { permission: read-write, accepted: true }
                    children:
                      r2:
                        type: Task
                        fields:
                          link: { ref: r5, action: validate }
                  r5:
                    type: Note
            lanes:
              check:
                steps:
                  - apply
                  - save: { as: bob, zone: Z1, record: r2, type: Task, fields: { note: by-bob } }
                  - expect: { as: alice, field: { zone: Z1, record: r2, name: note, equals: by-bob } }
                  - save:
                      as: bob
                      zone: Z1
                      record: r2
                      type: Task
                      fields: { link: { ref: r1, action: validate } }
                  - save:
                      as: bob
                      zone: Z1
                      record: r2
                      type: Task
                      fields: { link: { ref: r5, action: validate } }
                      expect_error: VALIDATING_REFERENCE_ERROR
            """)
        let result = try await SharelaneBinary.run(
            ["run", "check", recipe, "--store", "sqlite:" + directory.file("store.sqlite")], in: directory.url)
        #expect(result.status == 0, "\(result.output)")
    }
}
