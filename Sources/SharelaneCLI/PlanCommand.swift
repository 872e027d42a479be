import ArgumentParser
import Foundation
import Logging
import PlanModel
import Planner
import Recipe
import ShareKit
import SharingReport

extension PlanFormat: ExpressibleByArgument {}

/// `sharelane plan`: shows what `apply` would change, without changing anything.
struct PlanCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the difference between a recipe and the live store, without changing anything.",
        discussion: """
            Prints each change with its address and, for updates, each field before → after, then \
            `Plan: N to add, M to change, K to destroy.` --out saves the plan with the change tags it was \
            computed from; `sharelane apply FILE` applies exactly that plan, or refuses if the store changed \
            or is another. With SHARELANE_PLAN_KEY set (a secret of at least 16 characters), the file is signed \
            and `apply FILE` with the key refuses a file edited since. \
            With --detailed-exitcode: 0 no changes, 2 changes, 1 error.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane plan",
        "sharelane plan --out plan.json --detailed-exitcode --var-file production.yaml",
        "sharelane plan sharelane.yaml --against git:origin/main --format markdown > plan.md",
    ]

    @OptionGroup var recipeArgument: RecipeArgument

    @Option(help: "text (default; colour on a terminal), markdown (for a pull request) or json.")
    var format: PlanFormat = .text

    @Option(help: ArgumentHelp("Save the plan to this file, for `sharelane apply FILE`.", valueName: "file"))
    var out: String?

    @Flag(name: .customLong("detailed-exitcode"), help: "Exit 0 with no changes, 2 with changes, 1 on error.")
    var detailedExitcode = false

    @Flag(help: "Delete undeclared records and fields in every declared zone.")
    var prune = false

    @Flag(
        name: .customLong("show-access"),
        help: """
            After the text plan, the access matrix of the recipe's shares before → after the plan, the cells \
            that change marked with *.
            """)
    var showAccess = false

    @Flag(
        name: .customLong("show-encrypted"),
        help: """
            Show the values of ENCRYPTED fields in a markdown or JSON plan, which hides them (a pull request's \
            comment, a script's input); the text plan shows them.
            """)
    var showEncrypted = false

    func validate() throws {
        try againstOptions.validate(out: out, store: planning.storeOptions.store)
        if showAccess, format != .text {
            throw ValidationError(
                "--show-access adds the matrix to the text plan; the \(format.rawValue) plan already lists the access cells that change"
            )
        }
    }

    @OptionGroup var againstOptions: AgainstOptions
    @OptionGroup var planning: PlanningOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.plan")
        // Read before planning, so that a key too short is said before the plan's time is spent.
        let key = out == nil ? nil : try PlanningOptions.savedPlanKey()
        let plan = try await planning.planned(
            .plan(prune: prune, against: againstOptions), recipe: recipeArgument, lock: nil, logger: logger
        )
        .plan
        let style = format == .text ? await Terminal.planStyle() : .plain
        var output = StandardOutput()
        let shown = format == .text || showEncrypted ? plan : plan.hidingEncryptedValues()
        format.write(shown, style: style, expand: planning.expand, to: &output)
        if showAccess, let access = plan.access {
            output.write("\n")
            output.write(
                AccessComparison(before: access.before, after: access.after).text(
                    title: "Access to the recipe's shares, before → after this plan:",
                    style: await Terminal.accessStyle()))
        }
        output.flush()
        if let out {
            // A saved plan is a file anyone may read: it never holds a credential's value. Each line's bytes are
            // searched as it is written, so that the plan is never held a second time as text.
            let written: Bool
            do {
                let store = try StoreLocator.identity(
                    of: planning.storeOptions.url, container: plan.container, environment: plan.environment?.rawValue)
                // A signal while the file is written ends the process at once: the temporary file goes with it.
                written = try await Interruptions.endingAtOnce(
                    saying: "Interrupted: the plan was not saved to \(out).",
                    removing: [SavedPlan.partialPath(for: out)]
                ) {
                    try SavedPlan.write(plan, to: out, refusing: SecretMask.secrets, store: store, key: key)
                }
            } catch {
                throw CommandFailure.input("\(error)")
            }
            guard written else {
                throw CommandFailure.input(
                    "the plan holds the value of a credential (a token or key from the environment or --api-token), so it was not saved to \(out); take the credential out of the recipe's values and --var"
                )
            }
            Terminal.printError("Saved the plan to \(out); apply exactly this plan with `sharelane apply \(out)`.")
        }
        if detailedExitcode && !plan.isEmpty { throw ExitCode.changesPresent }
    }
}
