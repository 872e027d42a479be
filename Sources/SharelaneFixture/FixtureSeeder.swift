import Emulator
import Foundation
import Lanes
import Logging
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite

/// Seeds an emulator's store from a recipe, as `sharelane apply` then `sharelane run LANE` would: the
/// recipe's users signed in, its zones, records, shares and acceptances applied in its container and
/// environment, then the named lanes run. What it leaves is the fixture's reset point.
public struct FixtureSeeder: Sendable {
    public let worlds: any StoreWorlds
    public let logger: Logger
    /// Where the lanes' lines go (the terminal for `serve`, nowhere for a test).
    public let output: LaneOutput

    public init(worlds: any StoreWorlds, output: LaneOutput = .discard, logger: Logger) {
        self.worlds = worlds
        self.output = output
        self.logger = logger
    }

    /// Why seeding stopped: the apply's failures, or the lane that failed, said as `sharelane run` says it.
    public struct Failure: Error, CustomStringConvertible {
        /// The lane that failed; nil when the recipe did not apply whole.
        public var lane: String?
        /// The step that stopped the lane, as `sharelane run` prints it (`expect Trips as alice`).
        public var step: String?
        /// The lane's failure, with its `FILE:LINE:COLUMN` and, for an expectation, expected against found.
        public var laneError: LaneError?
        public var description: String

        init(description: String) {
            self.description = description
        }

        init(lane: String, recipeFile: String, report: LaneReport) {
            self.lane = lane
            let failed = report.steps.last { !$0.succeeded }
            self.step = failed?.summary
            self.laneError = report.failure
            let place = failed.map { " at step `\($0.summary)`" } ?? ""
            let reason = report.failure.map { ":\n\($0)" } ?? ""
            self.description = "seeding stopped: lane \(lane) of \(recipeFile) failed\(place)\(reason)"
        }
    }

    /// Applies `recipe` to its world and runs `lanes` there, in order.
    /// - Parameter reload: loads the recipe again with other variables (lanes that call lanes with
    ///   parameters); nil where the recipe came from a string.
    /// - Returns: the recipe's people, for `GET /_sharelane/users`.
    /// - Throws: `Failure` naming what did not apply or which lane failed; a store's or lane's own error.
    @discardableResult
    public func seed(
        _ recipe: Recipe, lanes: [String] = [], reload: LaneRunner.RecipeReloader? = nil,
        overrides: [String: String] = [:]
    ) async throws -> (world: StoreWorld, users: [FixtureUser]) {
        let world = StoreWorld(container: recipe.container, environment: recipe.environment)
        let store = try worlds.store(for: world)
        do throws(PlanAndApply.Failure) {
            _ = try await PlanAndApply(store: store, logger: logger).run(recipe)
        } catch .planning(let error), .applying(let error) {
            throw error
        } catch .changesFailed(let report) {
            throw Failure(
                description: "seeding \(recipe.file) did not apply whole:\n"
                    + report.failures.map { "  \($0.description)" }.joined(separator: "\n"))
        }
        for lane in lanes {
            let runner = LaneRunner(store: store, output: output, logger: logger, reload: reload, overrides: overrides)
            let result = try await runner.run(lane: lane, of: recipe)
            if !result.succeeded {
                throw Failure(lane: lane, recipeFile: recipe.file, report: result)
            }
        }
        let users = recipe.users.map { FixtureUser(handle: $0.handle, email: $0.email, name: $0.name) }
        return (world, users)
    }
}
