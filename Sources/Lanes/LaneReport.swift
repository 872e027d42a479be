import Recipe

/// What a lane run did, step by step, as data; the runner also prints it line by line as it goes.
public struct LaneReport: Sendable, Hashable {
    /// One executed step (hooks and steps of called lanes included, in the order they ran).
    public struct StepResult: Sendable, Hashable {
        /// What the step did, as printed: `accept FamilyLists as bob`.
        public var summary: String
        /// What the step found or changed, when there is something to say: `Plan: 3 to add, …`.
        public var detail: String?
        /// Nil when the step succeeded.
        public var error: LaneError?
        public var milliseconds: Int
        public var location: SourceLocation
        /// 0 for the lane's own steps, 1 for the steps of a lane it calls, and so on.
        public var depth: Int
        /// `before_all`, `after_all`, `error`, `before_each` or `after_each` for hook steps, nil otherwise.
        public var hook: String?
        /// What a command or an outside action printed (`sh:`, `sharelane-NAME`), for the reports.
        public var output: String?

        public var succeeded: Bool { error == nil }
    }

    public var lane: String
    public var steps: [StepResult]
    /// The failure that stopped the lane, nil when it succeeded.
    public var failure: LaneError?
    public var milliseconds: Int

    public var succeeded: Bool { failure == nil }

    /// A report of a lane's run; `LaneReport(lane:)` is one of a lane that has not run.
    public init(lane: String, steps: [StepResult] = [], failure: LaneError? = nil, milliseconds: Int = 0) {
        self.lane = lane
        self.steps = steps
        self.failure = failure
        self.milliseconds = milliseconds
    }
}
