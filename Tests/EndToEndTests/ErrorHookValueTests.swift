import Foundation
import SharelaneTestSupport
import Testing

/// The `error` hook learns what failed and where, as fastlane's `error do |lane, exception|` does: through
/// the binary, `${lane_error}` and `${lane_error_place}` in its steps, and the same in its commands'
/// environment.
@Suite("What the error hook is told of the failure")
struct ErrorHookValueTests {
    static let recipe = """
        sharelane: 1
        name: hooks
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Household: {}
        lanes:
          fails:
            steps:
              - apply
              - expect: { as: bob, can: read, zone: Household }
        error:
          - sh: { run: [echo, "hook:", "${lane_error_place}", "${lane_error}"] }
          - sh: 'echo "env: $SHARELANE_LANE_ERROR_PLACE $SHARELANE_LANE_ERROR"'

        """

    @Test("the error hook's steps get the failure's message and the failed step's place")
    func errorHookGetsTheFailure() async throws {
        let scratch = try TemporaryDirectory("e2e")
        try scratch.write("hooks.yaml", Self.recipe)
        let result = try await SharelaneBinary.run(
            ["run", "fails", "hooks.yaml", "--store", "memory:"], in: scratch.url)
        #expect(result.status == 1, "\(result.output)")
        let message = "expectation failed: expected bob read zone Household: allowed, found refused"
        #expect(result.stdout.contains("    hook: hooks.yaml:13:9 \(message)"), "\(result.output)")
        #expect(result.stdout.contains("    env: hooks.yaml:13:9 \(message)"), "\(result.output)")
        // The lane's failure stays the one reported.
        #expect(result.stdout.contains("✘ lane fails failed at hooks.yaml:13:9"), "\(result.output)")
    }

    @Test("${lane_error} outside the error hook is an error at its place")
    func laneErrorOutsideTheHookIsRefused() async throws {
        let scratch = try TemporaryDirectory("e2e")
        try scratch.write(
            "hooks.yaml",
            Self.recipe.replacingOccurrences(
                of: "      - apply\n", with: "      - apply\n      - sh: 'echo ${lane_error}'\n"))
        let result = try await SharelaneBinary.run(["validate", "hooks.yaml"], in: scratch.url)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains(
                "hooks.yaml:13:19: error: `${lane_error}` has a value only in the steps of the `error` hook"),
            "\(result.output)")
    }
}
