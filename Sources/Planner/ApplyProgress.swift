/// How far an apply has come, reported after each store call.
public struct ApplyProgress: Sendable, Hashable {
    /// Changes done or failed so far.
    public var completed: Int
    /// Changes in the plan.
    public var total: Int
    /// What was just done (`saved 200 records in FamilyLists`).
    public var message: String

    public init(completed: Int, total: Int, message: String) {
        self.completed = completed
        self.total = total
        self.message = message
    }
}
