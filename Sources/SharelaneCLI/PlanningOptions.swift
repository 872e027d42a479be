import ArgumentParser
import Foundation
import Logging
import Applier
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite

/// The options of every command that plans (`plan`, `apply`, `destroy`), and the one way they make a plan:
/// the recipe (or a saved plan), its cache, the store's lock, the store, the plan, and the message a failure
/// carries.
///
/// The recipe argument stays with each command, first among its options as `--help` lists them, and comes
/// in as `recipe`.
struct PlanningOptions: ParsableArguments {
    @OptionGroup var targetOptions: TargetOptions
    @OptionGroup var refreshOptions: RefreshOptions
    @Flag(help: "Show every record a `repeat:` made on its own lines (by default they are one line).")
    var expand = false

    @OptionGroup var parallelismOptions: ParallelismOptions
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions

    /// What a command plans, and the words of its failures.
    enum Purpose {
        /// `plan`: the difference, against the store or against another recipe's state (`--against`).
        case plan(prune: Bool, against: AgainstOptions)
        /// `apply`: a recipe's difference, or a saved plan as it was saved.
        case apply(prune: Bool)
        /// `destroy`: the removal of everything the recipe declares.
        case destroy

        var operation: String {
            switch self {
            case .plan: "plan"
            case .apply: "apply"
            case .destroy: "destroy"
            }
        }

        var nothingDone: String {
            switch self {
            case .plan, .apply: "nothing was planned or applied"
            case .destroy: "nothing was destroyed"
            }
        }
    }

    /// A plan made, with the store it was made against; the recipe is not kept, so that the memory it held
    /// (about 40 MB at 100,000 records) serves the apply's writes instead of adding to its peak.
    struct Planned {
        var plan: Plan
        var store: any Store
        var planAndApply: PlanAndApply
        /// Held from the plan to the last write, when the command locks.
        var lock: StoreLock?
    }

    /// Makes the plan of `purpose`: loads the recipe (or a saved plan, for `apply`), locks a local store when
    /// `lockOptions` is given, opens the store and plans.
    /// - Parameter onlyShowing: the plan is shown and nothing applied (an apply that will be refused for want
    ///   of `--yes`): the store is read as `plan` reads it, made or locked by nothing.
    /// - Throws: `CommandFailure` saying what could not be read, opened or planned.
    func planned(
        _ purpose: Purpose, recipe: RecipeArgument, lock lockOptions: LockOptions?, logger: Logger,
        onlyShowing: Bool = false
    ) async throws -> Planned {
        let path = try RecipeSelection.resolve(recipe.path)
        let isSaved: Bool
        if case .apply = purpose { isSaved = SavedPlan.isSavedPlan(at: path) } else { isSaved = false }
        var against: AgainstOptions?
        var reading = onlyShowing
        if case .plan(_, let options) = purpose {
            if options.against != nil { against = options }
            reading = true
        }
        // A plan of a store not made yet keeps no cache of it: the store the apply makes is another.
        let notYetMade = reading && storeOptions.notYetMadePath != nil
        var source =
            isSaved
            ? nil
            : try PlanSource(
                path: path, selection: recipeSelection,
                cache: against != nil || notYetMade
                    ? nil
                    : refreshOptions.cache(storeURL: storeOptions.url, recipePath: path, selection: recipeSelection),
                nothingDone: purpose.nothingDone)
        // A local store is locked from the plan to the last write: another apply waits, or is told who holds it.
        let lock = onlyShowing ? nil : try await lockOptions?.lock(storeOptions.url, operation: purpose.operation)
        let targets = targetOptions.targets
        if isSaved, !targets.isEmpty {
            throw CommandFailure.usage("a saved plan is applied whole; --target goes with `sharelane plan --out`")
        }
        let saved: Plan?
        if isSaved {
            let key = try Self.savedPlanKey()
            let contents: SavedPlan.Contents
            do {
                contents = try SavedPlan.contents(of: path, key: key)
            } catch {
                throw CommandFailure.input("\(error)")
            }
            // Checked before the store is opened, which makes a SQLite file that is not there yet.
            try checkStore(of: contents, path: path)
            if contents.isSigned, key == nil {
                Terminal.printError(
                    "\(path) is signed, but \(SavedPlanKey.environmentVariable) is not set here: its signature was not checked."
                )
            }
            saved = contents.plan
        } else {
            saved = nil
        }
        let parallelism = parallelismOptions.parallelism
        let store: any Store
        var base: AgainstRecipe?
        if let against, let source {
            (store, base) = try await against.baseStore(
                for: source.recipe, recipePath: path, selection: recipeSelection, parallelism: parallelism,
                logger: logger)
        } else {
            // http: and cloudkit: address the recipe's container and environment, which a saved plan names too.
            store = try storeOptions.open(
                for: source?.recipe, container: saved?.container, environment: saved?.environment,
                parallelism: parallelism, reading: reading, logger: logger)
        }
        // A world not made yet, read as empty: no cache of it (the store an apply makes is another).
        if StoreFile.isStandIn(store) { source?.cache = nil }
        let planAndApply = PlanAndApply(store: store, logger: logger, parallelism: parallelism)
        var plan: Plan
        do {
            if let saved {
                plan = try await Self.verified(saved, applier: planAndApply.applier)
            } else if let source {
                let options: PlanOptions
                switch purpose {
                case .plan(let prune, _), .apply(let prune): options = PlanOptions(prune: prune, targets: targets)
                case .destroy: options = PlanOptions(destroy: true, targets: targets)
                }
                plan = try await source.plan(with: planAndApply.planner, options: options)
            } else {
                throw CommandFailure.input("cannot read \(path)")
            }
        } catch let error as CommandFailure {
            throw error
        } catch {
            switch purpose {
            case .plan:
                throw CommandFailure.store(
                    "cannot plan \(path) against \(base.map(\.name) ?? store.displayName): \(error)")
            case .apply:
                switch error {
                // A store changed since the saved plan, or another store than the one it was made for.
                case PlannerError.stalePlan, PlannerError.wrongStore: throw CommandFailure.conflict("\(error)")
                default: throw CommandFailure.store("\(error)")
                }
            case .destroy:
                throw CommandFailure.store("cannot plan the removal of \(path) from \(store.displayName): \(error)")
            }
        }
        plan.against = base
        return Planned(plan: plan, store: store, planAndApply: planAndApply, lock: lock)
    }

    /// The key that signs and checks saved plans, from `SHARELANE_PLAN_KEY`; nil when it is not set. Its
    /// value is masked in everything the command writes, as a credential's is.
    /// - Throws: `CommandFailure` for a key too short to be a secret.
    static func savedPlanKey() throws -> SavedPlanKey? {
        guard let secret = ProcessInfo.processInfo.environment[SavedPlanKey.environmentVariable], !secret.isEmpty
        else { return nil }
        let key: SavedPlanKey
        do {
            key = try SavedPlanKey(secret)
        } catch {
            throw CommandFailure.input("\(error)")
        }
        SecretMask.register(secret)
        return key
    }

    /// Refuses a saved plan made against another store than the one `--store` names now.
    /// - Throws: `CommandFailure` naming both stores.
    private func checkStore(of contents: SavedPlan.Contents, path: String) throws {
        let url = storeOptions.url
        guard let planned = contents.store else {
            throw CommandFailure.input(
                "cannot apply the saved plan \(path): it does not name the store it was made for; make it again with `sharelane plan --out \(path)`, nothing was applied"
            )
        }
        let actual: SavedPlanStore
        do {
            actual = try StoreLocator.identity(
                of: url, container: contents.plan.container, environment: contents.plan.environment?.rawValue)
        } catch {
            throw CommandFailure.input("\(error)")
        }
        guard planned != actual else { return }
        throw CommandFailure.conflict(
            "cannot apply the saved plan \(path): it was made for \(planned), and --store \(url) is \(actual); apply it to the store it was made for, or make a plan for this one with `sharelane plan --out`, nothing was applied"
        )
    }

    /// A saved plan, once the store is found unchanged in everything it reads or writes.
    private static func verified(_ plan: Plan, applier: Applier) async throws -> Plan {
        let passedOver = try await applier.verify(plan)
        if !passedOver.isEmpty {
            Terminal.printError(
                "The store changed since the plan, but not in what the plan reads or writes; applying it:\n"
                    + passedOver.map { "  - \($0)" }.joined(separator: "\n"))
        }
        // The plan's `!asset` files, which `verify` found unchanged, are kept or uploaded from where it says
        // (`Plan.assetFiles`), as the apply passes them with its writes.
        return plan
    }
}
