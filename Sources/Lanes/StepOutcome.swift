/// What a step has to say once it succeeded: a short note for its line, and lines to print under it
/// (a plan's changes, an exported recipe).
struct StepOutcome {
    var detail: String?
    var lines: [String]

    init(_ detail: String?, lines: [String] = []) {
        self.detail = detail
        self.lines = lines
    }
}
