import Recipe
import ShareKit

// `before_each` and `after_each`, as fastlane's `before_each do |lane|` and `after_each do |lane|`: around every
// lane that runs, the one the command line runs and each one a `lane:` step calls.
extension LaneRunner {
    /// Runs `lane`'s steps at `depth`, with `${lane}` its name, after the recipe's `before_each` steps and
    /// before its `after_each` steps, each one level deeper than the lane's steps.
    ///
    /// A failing `before_each` step fails the lane before its first step. `after_each` runs whatever became
    /// of the lane, as a test's tear-down does, so that what `before_each` set up is undone after a failure too;
    /// its own failure fails the lane. A run asked to stop starts neither. The first failure is the one thrown.
    func runLane(_ lane: Lane, in scope: Scope, depth: Int, _ session: LaneSession, _ run: Run) async throws {
        let previous = run.values.value(LaneValueNames.lane)
        run.values.register(LaneValueNames.lane, .text(lane.name))
        defer { if let previous { run.values.register(LaneValueNames.lane, previous) } }
        let recipe = scope.recipe
        guard !scope.inEachHook, !recipe.beforeEach.isEmpty || !recipe.afterEach.isEmpty else {
            try await runSteps(lane.steps, hook: nil, in: scope, depth: depth, session, run)
            return
        }
        var hooks = scope
        hooks.inEachHook = true
        let indent = String(repeating: "  ", count: depth)
        var failure: LaneError?
        do {
            if !recipe.beforeEach.isEmpty {
                output.line("\(indent)▸ before_each \(lane.name)")
                try await runSteps(recipe.beforeEach, hook: "before_each", in: hooks, depth: depth + 1, session, run)
            }
            try await runSteps(lane.steps, hook: nil, in: scope, depth: depth, session, run)
        } catch let error as LaneError {
            failure = error
        }
        if !recipe.afterEach.isEmpty, !StopRequest.isRequestedNow {
            output.line("\(indent)▸ after_each \(lane.name)")
            // A failure of after_each's own is printed where it happens, even after the lane's.
            let printed = run.failurePrinted
            run.failurePrinted = false
            do {
                try await runSteps(recipe.afterEach, hook: "after_each", in: hooks, depth: depth + 1, session, run)
            } catch let error as LaneError {
                if failure == nil { failure = error }
            }
            run.failurePrinted = printed || run.failurePrinted
        }
        if let failure { throw failure }
    }
}
