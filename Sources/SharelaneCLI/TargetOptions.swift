import ArgumentParser
import PlanModel
import Planner
import Recipe

/// `--target ADDRESS` (repeatable) on `plan`, `apply` and `destroy`, as Terraform's `-target`.
struct TargetOptions: ParsableArguments {
    @Option(
        name: .customLong("target"),
        help: ArgumentHelp(
            "Plan only this address, as plans print it ('zone FamilyLists', 'record Trips/italy', or record.Trips/italy), and what it needs; repeatable.",
            valueName: "ADDRESS"),
        completion: TargetOptions.addresses)
    var targets: [String] = []

    func validate() throws {
        for target in targets {
            do {
                _ = try PlanTarget(parsing: target)
            } catch {
                throw CommandFailure.usage("\(error)")
            }
        }
    }

    /// Completes the addresses the recipe declares: its zones, records, shares and participants, written
    /// `KIND.NAME` (a space would split the word in a shell).
    static let addresses = CompletionKind.custom { words, _, _ in
        guard let recipe = RecipeCompletion.recipe(in: words) else { return [] }
        var addresses: [String] = []
        func share(_ declaration: ShareDeclaration?, path: String) {
            guard case .share(let share) = declaration else { return }
            addresses.append("share.\(path)")
            addresses += share.participants.map { "participant.\(path)/\($0.handle)" }
        }
        for zone in recipe.zones where !zone.absent {
            addresses.append("zone.\(zone.name)")
            share(zone.share, path: zone.name)
            for record in zone.records where !record.absent {
                addresses.append("record.\(zone.name)/\(record.name)")
                share(record.share, path: "\(zone.name)/\(record.name)")
            }
        }
        addresses += recipe.publicRecords.filter { !$0.absent }.map { "record.(public)/\($0.name)" }
        return addresses
    }
}
