import ArgumentParser
import Foundation
import Applier
import PlanModel
import Planner
import ShareKit

/// Shows a plan, asks, applies it and reports: `apply` and `destroy` alike.
struct ApplyFlow {
    let store: any Store
    let planAndApply: PlanAndApply
    let yes: Bool
    /// `destroy`'s words for the question and the last line.
    var destroying = false
    /// `--expand`: every generated record on its own lines.
    var expand = false
    var command: String { destroying ? "destroy" : "apply" }

    func run(_ plan: Plan) async throws {
        let style = await Terminal.planStyle()
        if destroying, plan.isEmpty {
            // "the store matches the recipe" would read as if the recipe were applied: it matches its absence.
            Terminal.write(
                "Nothing to destroy: \(store.displayName) holds nothing that recipe \(plan.recipeName) declares.\n")
            return
        }
        // With --yes and the output going to a file or a pipe (CI, scripts), nobody reads the plan before the
        // apply starts: it is written out while the first batches are written. On a terminal it comes first.
        let renderAlongside = yes && !plan.isEmpty && !Terminal.stdoutIsTerminal
        let rendering = Task.detached {
            guard renderAlongside else { return }
            Self.writePlan(plan, style: style, expand: expand, blankLineAfter: true)
        }
        // Until the writes start, a signal ends the process, saying that nothing was written.
        try await Interruptions.endingAtOnce(
            saying:
                "Interrupted: nothing was \(destroying ? "destroyed" : "applied"), and \(store.displayName) was not changed."
        ) {
            if !renderAlongside { Self.writePlan(plan, style: style, expand: expand, blankLineAfter: false) }
            if plan.isEmpty { return }
            try ask()
        }
        if plan.isEmpty { return }
        if !renderAlongside { Terminal.write("\n") }
        // Long applies show their progress on a terminal, and without one (a CI log) a plain line every few
        // seconds; any apply says so when the store makes it wait (`throttled, retrying in 3 s`).
        let onTerminal = Terminal.stderrIsTerminal
        let reporter = ApplyProgressReporter(
            style: onTerminal
                ? .statusLine(everyStep: plan.changes.count >= 50)
                : .lines(interval: ApplyProgressReporter.interval(environment: ProcessInfo.processInfo.environment))
        ) { text in FileHandle.standardError.write(Data((onTerminal ? text : text + "\n").utf8)) }
        let progress: @Sendable (ApplyProgress) -> Void = { reporter.report($0) }
        let report: ApplyReport
        do {
            // A first Ctrl-C (or SIGTERM) from here on asks the apply to stop; before, it ends the process.
            report = try await Interruptions.whileWriting(command, store: store.displayName) {
                try await planAndApply.apply(plan, progress: progress)
            }
        } catch {
            await rendering.value
            throw CommandFailure.store("\(error)")
        }
        await rendering.value
        reporter.finish()
        for line in report.failureLines() {
            Terminal.printError("error: \(line)")
        }
        if report.stopped != nil {
            for line in report.stopLines(command: command) { Terminal.printError(line) }
        } else if !report.succeeded {
            Terminal.printError("Run `sharelane plan` to see what is left; apply again once the cause is fixed.")
        }
        // The last line says what was done, once (Terraform's `Apply complete! Resources: …`); the plan's own
        // summary line, which counts the same changes as pending, is above it with the plan.
        if destroying && report.succeeded {
            Terminal.write("Destroy complete! Resources: \(report.applied.count) destroyed.\n")
        } else {
            Terminal.write(report.line + "\n")
        }
        if let signal = Interruptions.stoppedBySignal { throw CommandFailure.interrupted(signal: signal) }
        if !report.succeeded { throw ExitCode.failure }
    }

    /// Asks for `yes`, unless `--yes` was given.
    /// - Throws: `CommandFailure` without a terminal to ask on, `ExitCode.failure` for any other answer.
    private func ask() throws {
        guard !yes else { return }
        guard Terminal.stdinIsTerminal else {
            throw CommandFailure.usage(
                "\(command) needs --yes when standard input is not a terminal (nothing was applied): review the plan, then run `sharelane \(command) --yes`"
            )
        }
        Terminal.write(
            destroying
                ? "\nDo you really want to destroy everything this recipe declares in \(store.displayName)?\n"
                    + "There is no undo. Only 'yes' will be accepted: "
                : "\nDo you want to apply these changes to \(store.displayName)?\nOnly 'yes' will be accepted: ")
        guard readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
            Terminal.printError("\(destroying ? "Destroy" : "Apply") cancelled; nothing was applied.")
            throw ExitCode.failure
        }
    }

    private static func writePlan(_ plan: Plan, style: TextStyle, expand: Bool, blankLineAfter: Bool) {
        var output = StandardOutput()
        PlanFormat.text.write(plan, style: style, expand: expand, to: &output)
        if blankLineAfter { output.write("\n") }
        output.flush()
    }
}
