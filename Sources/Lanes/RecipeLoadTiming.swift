import Foundation
import Recipe
import Synchronization

/// Recipe loading as its own timed line in a lane's output, so that the time spent reading a recipe (once
/// before the lane, again for each `lane:` call with parameters) is not hidden between steps.
public enum RecipeLoadTiming {
    /// `reload`, writing to `output` after each load `✔ recipe FILE loaded  (N ms)`, with the parameters it
    /// was loaded with after the first.
    public static func timed(
        _ reload: @escaping LaneRunner.RecipeReloader, file: String, output: LaneOutput
    ) -> LaneRunner.RecipeReloader {
        let loads = Loads()
        return { overrides in
            let start = ContinuousClock.now
            let recipe = try reload(overrides)
            let elapsed = ContinuousClock.now - start
            let ms = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            let isFirst = loads.count.withLock { count in
                count += 1
                return count == 1
            }
            let with =
                isFirst || overrides.isEmpty
                ? ""
                : " with " + overrides.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            output.line("✔ recipe \(file) loaded\(isFirst ? "" : " again")\(with)  (\(ms) ms)")
            return recipe
        }
    }
}

/// How many times a recipe was loaded, shared by the calls of one timed reloader.
private final class Loads: Sendable {
    let count = Mutex(0)
}
