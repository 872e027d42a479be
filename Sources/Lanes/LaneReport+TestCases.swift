import Recipe

// A lane run as the test cases CI servers keep a history of: every step the lane has, run or not, named by
// what it is rather than where it is, so that a line added above a step does not rename it.
extension LaneReport {
    /// One step of a lane as a test case.
    public struct TestCase: Sendable, Hashable {
        /// What became of the step.
        public enum Outcome: Sendable, Hashable {
            case passed
            /// The step ran and failed (an expectation that did not hold, a refusal).
            case failed(LaneError)
            /// The step was under way, or next, when the run was asked to stop.
            case interrupted(LaneError?)
            /// The step did not run: a step before it failed, or the run stopped first.
            case skipped
            /// The lane could not start (its store's lock stayed held, its recipe did not load).
            case notStarted(LaneError)
        }

        /// `LANE › STEP`, `LANE › CALLED › STEP` for a step of a called lane, `LANE › before_all › STEP` for a
        /// hook's, `LANE › CALLED › before_each › STEP` for a hook's around a called lane; unique within its lane (a repeated name ends in ` (2)`, ` (3)`, …).
        public var name: String
        public var milliseconds: Int
        public var location: SourceLocation
        public var outcome: Outcome
        /// What the step's command printed, if it ran one.
        public var output: String?
    }

    /// Every step of the lane, its hooks and the lanes it calls, in the recipe's order: the steps that ran
    /// with their outcomes, the others skipped. A `lane:` step is not a case of its own (its steps are, and
    /// its time is theirs), unless it failed before any of them ran.
    ///
    /// - Parameters:
    ///   - recipe: the recipe the lane was run from, for the steps that did not run and the steps' names.
    ///   - interrupted: whether the run was asked to stop: the step that failed is then an interrupted one.
    public func testCases(in recipe: Recipe, interrupted: Bool = false) -> [TestCase] {
        var index: [SourceLocation: Step] = [:]
        let hooks = recipe.beforeAll + recipe.afterAll + recipe.onError + recipe.beforeEach + recipe.afterEach
        for step in recipe.lanes.flatMap(\.steps) + hooks {
            index[step.location] = step
        }
        var builder = CaseBuilder(
            recipe: recipe, index: index, interruptedAt: interrupted ? failure?.location : nil,
            stoppedAt: failure.flatMap { if case .interrupted(let place) = $0 { place } else { nil } })
        var ran = Self.ranSteps(steps, index: index)[...]
        let lanePath = [lane]
        builder.add(recipe.beforeAll, ran: &ran, path: lanePath + ["before_all"], chain: [lane])
        builder.addLane(recipe.lane(lane)?.steps ?? [], ran: &ran, path: lanePath, chain: [lane], eachHooks: true)
        builder.add(recipe.afterAll, ran: &ran, path: lanePath + ["after_all"], chain: [lane])
        // The error hook's steps are cases only when it ran.
        builder.add(recipe.onError, ran: &ran, path: lanePath + ["error"], chain: [lane], skipping: false)
        // Anything the recipe no longer lists (it was loaded again with other variables) is kept as it ran.
        for node in ran { builder.addRan(node, name: lanePath + [node.result.summary]) }
        return Self.unique(builder.cases)
    }

    /// A step that ran, with the steps of the lane it called, if it called one.
    struct RanStep {
        var result: StepResult
        var children: [RanStep]
    }

    /// The steps that ran, as a tree: a called lane's steps are recorded before the `lane:` step that called
    /// them (it finishes last), one level deeper.
    static func ranSteps(_ steps: [StepResult], index: [SourceLocation: Step]) -> [RanStep] {
        var stack: [RanStep] = []
        for result in steps {
            var node = RanStep(result: result, children: [])
            if case .lane = index[result.location]?.action {
                var first = stack.count
                // A hook's own steps are not a called lane's, though they are as deep; the steps of the
                // before_each and after_each around the called lane are its, one level deeper than its steps.
                while first > 0, stack[first - 1].result.depth > result.depth,
                    stack[first - 1].result.hook == nil
                        || (eachHooks.contains(stack[first - 1].result.hook ?? "")
                            && stack[first - 1].result.depth > result.depth + 1)
                {
                    first -= 1
                }
                node.children = Array(stack[first...])
                stack.removeSubrange(first...)
            }
            stack.append(node)
        }
        return stack
    }

    /// The hooks that run around every lane.
    static let eachHooks: Set<String> = ["before_each", "after_each"]

    /// A repeated name gets ` (2)`, ` (3)`, … in the order the steps come.
    static func unique(_ cases: [TestCase]) -> [TestCase] {
        var seen: [String: Int] = [:]
        return cases.map { testCase in
            var copy = testCase
            let count = (seen[testCase.name] ?? 0) + 1
            seen[testCase.name] = count
            if count > 1 { copy.name += " (\(count))" }
            return copy
        }
    }

    /// Walks the recipe's steps beside the steps that ran.
    struct CaseBuilder {
        let recipe: Recipe
        let index: [SourceLocation: Step]
        /// The place of the failure, when the run was asked to stop: that step was interrupted.
        let interruptedAt: SourceLocation?
        /// The step the run stopped before (`LaneError.interrupted`).
        let stoppedAt: SourceLocation?
        var cases: [TestCase] = []

        static let separator = " › "

        /// A lane's steps, between the steps of `before_each` and `after_each` when `eachHooks` (not for a lane
        /// those hooks call).
        mutating func addLane(
            _ steps: [Step], ran: inout ArraySlice<RanStep>, path: [String], chain: [String], eachHooks: Bool
        ) {
            guard eachHooks else {
                add(steps, ran: &ran, path: path, chain: chain, eachHooks: false)
                return
            }
            add(recipe.beforeEach, ran: &ran, path: path + ["before_each"], chain: chain, eachHooks: false)
            add(steps, ran: &ran, path: path, chain: chain, eachHooks: true)
            add(recipe.afterEach, ran: &ran, path: path + ["after_each"], chain: chain, eachHooks: false)
        }

        mutating func add(
            _ steps: [Step], ran: inout ArraySlice<RanStep>, path: [String], chain: [String], skipping: Bool = true,
            eachHooks: Bool = true
        ) {
            for step in steps {
                let name = path + [step.name ?? StepSummary.text(of: step, owner: recipe.owner)]
                if let node = ran.first, node.result.location == step.location {
                    ran.removeFirst()
                    if case .lane(let called, _) = step.action, !node.children.isEmpty || node.result.succeeded {
                        var children = node.children[...]
                        let calledSteps = chain.contains(called) ? [] : recipe.lane(called)?.steps ?? []
                        addLane(
                            calledSteps, ran: &children, path: path + [called], chain: chain + [called],
                            eachHooks: eachHooks)
                        for child in children { addRan(child, name: path + [called, child.result.summary]) }
                        // A failure of the call itself that none of its steps reports is a case of its own.
                        if let error = node.result.error, !node.children.contains(where: { Self.failed($0) }),
                            error.location.map({ place in !calledSteps.contains { $0.location == place } }) ?? true
                        {
                            addRan(RanStep(result: node.result, children: []), name: name)
                        }
                    } else {
                        addRan(node, name: name)
                    }
                } else if skipping {
                    addSkipped(step, name: name, chain: chain, eachHooks: eachHooks)
                }
            }
        }

        static func failed(_ node: RanStep) -> Bool {
            !node.result.succeeded && (node.children.isEmpty || node.children.contains(where: failed))
        }

        mutating func addRan(_ node: RanStep, name: [String]) {
            let result = node.result
            let outcome: TestCase.Outcome
            if let error = result.error {
                if case .interrupted = error {
                    outcome = .interrupted(error)
                } else if let interruptedAt, error.location == interruptedAt {
                    outcome = .interrupted(error)
                } else {
                    outcome = .failed(error)
                }
            } else {
                outcome = .passed
            }
            cases.append(
                TestCase(
                    name: name.joined(separator: Self.separator), milliseconds: result.milliseconds,
                    location: result.location, outcome: outcome, output: result.output))
        }

        /// A step that did not run, and the steps of the lane it would have called (the first of them the
        /// interrupted one when the run stopped before the call).
        mutating func addSkipped(_ step: Step, name: [String], chain: [String], eachHooks: Bool) {
            let first = cases.count
            if case .lane(let called, _) = step.action, !chain.contains(called), let lane = recipe.lane(called),
                !lane.steps.isEmpty
            {
                var none: ArraySlice<RanStep> = []
                addLane(
                    lane.steps, ran: &none, path: Array(name.dropLast()) + [called], chain: chain + [called],
                    eachHooks: eachHooks)
            } else {
                cases.append(
                    TestCase(
                        name: name.joined(separator: Self.separator), milliseconds: 0, location: step.location,
                        outcome: .skipped, output: nil))
            }
            if step.location == stoppedAt, cases.count > first { cases[first].outcome = .interrupted(nil) }
        }
    }
}
