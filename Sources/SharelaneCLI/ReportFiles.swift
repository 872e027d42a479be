import ArgumentParser
import Foundation
import Lanes
import Recipe

/// The report files `run --report` and `test --report` write: checked before anything runs, and written
/// even when the lane never started, so that CI finds a report that says why.
enum ReportFiles {
    /// The reports `--report FORMAT:FILE` entries ask for (`run`, `replay`): a JUnit or a JSON file each.
    /// - Throws: `ValidationError` for an entry that is not `junit:FILE` or `json:FILE`.
    static func requests(_ entries: [String]) throws -> [(format: String, path: String)] {
        try entries.map { entry in
            let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, ["junit", "json"].contains(parts[0]), !parts[1].isEmpty else {
                throw ValidationError(
                    "--report \"\(entry)\" is not FORMAT:FILE: write junit:report.xml or json:report.json")
            }
            return (parts[0], parts[1])
        }
    }

    /// Refuses a report whose folder does not exist, saying so, before any lane runs.
    /// - Throws: `ExitCode.failure` after printing which.
    static func refuseMissingFolders(_ paths: [String]) throws {
        for path in paths {
            // Said as it was given: a relative folder stays relative.
            let given = (path as NSString).deletingLastPathComponent
            let folder = given.isEmpty ? "." : given
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                Terminal.printError(
                    "error: cannot write the report to \(path): there is no folder \(folder); create it or name "
                        + "another file; no lane was run")
                throw ExitCode.failure
            }
        }
    }

    /// Writes `text` to `path`, secrets masked as in everything the command line writes.
    /// - Throws: `ExitCode.failure` after saying which file could not be written.
    static func write(_ text: String, format: String, to path: String) throws {
        do {
            try SecretMask.apply(text).write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            Terminal.printError("error: cannot write the \(format) report to \(path): \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }

    /// GitHub Actions' annotation of a lane that did not start, printed when running under it.
    static func annotateUnstarted(lane: String, location: SourceLocation?, reason: String) {
        guard ProcessInfo.processInfo.environment["GITHUB_ACTIONS"] == "true" else { return }
        Terminal.write(LaneReport.githubAnnotation(at: location, lane: lane, message: reason) + "\n")
    }
}

extension RunCommand {
    /// Runs `start`, what comes before the lane's first step (taking the store's lock); when it fails, the
    /// reports say the lane did not start, and why, before the error goes on.
    func beforeTheLane<Value>(_ recipe: Recipe, _ start: () async throws -> Value) async throws -> Value {
        do {
            return try await start()
        } catch {
            unstarted(recipeFile: recipe.file, location: recipe.lane(lane)?.location, reason: "\(error)")
            throw error
        }
    }

    /// Writes the reports `--report` asks for with the lane as not started, and annotates it on GitHub.
    func unstarted(recipeFile: String, location: SourceLocation?, reason: String) {
        ReportFiles.annotateUnstarted(lane: lane, location: location, reason: reason)
        let failure = LaneError.stepFailed(
            action: "start lane \(lane)", reason: reason,
            location: location ?? SourceLocation(file: recipeFile, line: 1, column: 1))
        for (format, path) in (try? reports()) ?? [] {
            let text =
                format == "junit"
                ? LaneReport.junitXML(suites: [
                    .unstarted(lane: lane, recipeFile: recipeFile, location: location, reason: reason)
                ])
                : String(
                    decoding: (try? LaneReport(lane: lane, failure: failure).json(recipeFile: recipeFile)) ?? Data(),
                    as: UTF8.self)
            try? ReportFiles.write(text, format: format, to: path)
        }
    }
}
