import ChildProcesses
import Foundation
import Recipe
import ShareKit

/// The steps that make a lane a script, as fastlane's are: `sh:` runs a command, a step named after an
/// outside action runs `sharelane-NAME`, and what they print is registered for later steps (`register:`;
/// `LaneValueResolver` puts it into their text). Only `sharelane run` runs a lane: `validate`, `plan`,
/// `apply`, `destroy` and `export` never run a command a recipe names.
struct ScriptSteps {
    let store: any Store
    let output: LaneOutput
    let recipe: Recipe
    /// The lane the command line runs (`SHARELANE_LANE`).
    let lane: String
    let values: LaneValues
    let indent: String
    /// Where the lines a command prints are kept for the lane's reports, as well as shown.
    var transcript: StepTranscript?

    /// The credentials among the values of the `.env` files and `--var-file`s a command is given: masked in
    /// what it prints, as the command line masks the credentials of its own environment.
    var secrets: [String] { Credentials.secrets(in: recipe.commandEnvironment?.values ?? [:]) }

    /// `text` with the secrets a command was given masked.
    func masked(_ text: String) -> String {
        let secrets = self.secrets
        return secrets.isEmpty ? text : Credentials.masking(secrets, in: text)
    }

    /// The recipe's folder: where commands run and where `actions/` is.
    var recipeDirectory: String {
        URL(fileURLWithPath: recipe.file).deletingLastPathComponent().path
    }

    // MARK: - sh

    func shell(_ shell: ShellStep, step: Step) async throws -> StepOutcome {
        // The runner put the lane's values into the step's text before it came here.
        let arguments: [String]
        switch shell.command {
        case .shell(let line): arguments = ["/bin/sh", "-c", line]
        case .arguments(let words): arguments = words
        }
        var environment = try await baseEnvironment(step: step)
        for (key, value) in shell.environment { environment[key] = value }
        let result = try await run(
            arguments, input: nil, environment: environment, directory: shell.directory, timeout: shell.timeout,
            streamingStandardOutput: true, step: step)
        let summary = StepSummary.text(of: step, owner: recipe.owner)
        if let timeout = shell.timeout, result.timedOut {
            throw LaneError.stepFailed(
                action: summary,
                reason: "the command ran longer than its timeout of \(Self.seconds(timeout)) and was stopped",
                location: step.location)
        }
        if result.status != 0 && !shell.allowFailure {
            throw LaneError.stepFailed(
                action: summary,
                reason: "the command exited with status \(result.status)"
                    + masked(Self.lastLines(result.standardError)),
                location: step.location)
        }
        let printed = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        if let name = shell.register { values.register(name, .text(printed)) }
        var detail = result.status == 0 ? "exit 0" : "exit \(result.status), allowed"
        if let name = shell.register { detail += "; ${\(name)} registered" }
        return StepOutcome(detail)
    }

    // MARK: - Outside actions

    func outside(_ action: OutsideAction, step: Step) async throws -> StepOutcome {
        let summary = StepSummary.text(of: step, owner: recipe.owner)
        guard let executable = OutsideActions.executable(named: action.name, recipeDirectory: recipeDirectory)
        else {
            throw LaneError.stepFailed(
                action: summary,
                reason:
                    "no executable \(OutsideActions.prefix)\(action.name) in the recipe's actions/ folder or on PATH",
                location: step.location)
        }
        let input = try JSONSerialization.data(withJSONObject: action.parameters.jsonObject, options: [.sortedKeys])
        let result = try await run(
            [executable.path], input: input, environment: try await baseEnvironment(step: step), directory: nil,
            timeout: nil, streamingStandardOutput: false, step: step)
        let text = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let object = text.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any]
        if object == nil {
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                output.toolLine(masked(String(line)), indent: indent + "    ")
                transcript?.append(masked(String(line)))
            }
        }
        guard result.status == 0 else {
            throw LaneError.stepFailed(
                action: summary,
                reason: "\(OutsideActions.prefix)\(action.name) exited with status \(result.status)"
                    + masked(Self.lastLines(result.standardError)), location: step.location)
        }
        if let name = action.register {
            values.register(name, object.map { LaneValues.Value.object(text, $0) } ?? .text(text))
        }
        let members = object.map { "result: " + $0.keys.sorted().joined(separator: ", ") }
        return StepOutcome(members ?? (action.register.map { "${\($0)} registered" }))
    }

    /// What a command or an outside action finds in its environment besides this process's: the values of the
    /// `.env` files and `--var-file`s under their own names, the store, the recipe, the lane, the recipe's
    /// variables (`SHARELANE_VAR_<NAME>`), and in the `error` hook `SHARELANE_LANE_ERROR` and
    /// `SHARELANE_LANE_ERROR_PLACE`.
    private func baseEnvironment(step: Step) async throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in recipe.commandEnvironment?.values ?? [:] { environment[name] = value }
        environment["SHARELANE_STORE"] = store.displayName
        environment["SHARELANE_RECIPE"] = recipe.file
        environment["SHARELANE_LANE"] = lane
        for (name, value) in recipe.variables { environment["SHARELANE_VAR_" + name.uppercased()] = value }
        // In the `error` hook, what failed and where, for a command that should not have a message's quotes and
        // backticks put into its command line.
        for name in LaneValueNames.errorHook.sorted() {
            if let value = values.value(name) { environment["SHARELANE_" + name.uppercased()] = value.text }
        }
        return environment
    }

    // MARK: - Processes

    struct Finished {
        var status: Int32
        var standardOutput: String
        var standardError: String
        var timedOut: Bool
    }

    /// Runs a program, its output lines streamed under the step's line as they come (standard output too when
    /// `streamingStandardOutput`), and both kept.
    private func run(
        _ arguments: [String], input: Data?, environment: [String: String], directory: String?, timeout: Double?,
        streamingStandardOutput: Bool, step: Step
    ) async throws -> Finished {
        guard var program = arguments.first else {
            throw LaneError.stepFailed(action: "sh", reason: "nothing to run", location: step.location)
        }
        let base = URL(fileURLWithPath: recipeDirectory)
        let workingDirectory =
            directory.map { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : base.appendingPathComponent($0) } ?? base
        // `run: [./tool]` names a program in the folder the step runs in, as a shell there would find it.
        if program.contains("/"), !program.hasPrefix("/") {
            program = workingDirectory.appendingPathComponent(program).standardizedFileURL.path
        }
        let collected = OutputCollector(
            output: output, indent: indent + "    ", transcript: transcript, secrets: secrets)
        let child = ChildProcess(
            [program] + arguments.dropFirst(), environment: environment, directory: workingDirectory.path,
            ownGroup: true, grace: .seconds(Self.graceSeconds))
        // A signal asks the lane to stop after the step under way: the step's own programs, in a group of their
        // own that the terminal does not reach, get the same signal (Ctrl-C, SIGTERM, SIGHUP), as a shell's
        // would.
        let stop = StopRequest.current
        let watching = stop?.whenRequested { child.stop(ChildProcess.stopSignal) }
        defer { if let watching { stop?.forget(watching) } }
        let finished: ChildProcess.Finished
        do {
            finished = try await child.run(
                input: input.map { .data($0) } ?? .nothing,
                output: .collected { bytes, isError in
                    collected.append(bytes, standardOutput: !isError, stream: isError || streamingStandardOutput)
                }, timeout: timeout.map { .milliseconds(Int($0 * 1000)) })
        } catch let failure as ChildProcess.LaunchFailure {
            throw LaneError.stepFailed(
                action: StepSummary.text(of: step, owner: recipe.owner), reason: "\(failure)",
                location: step.location)
        }
        collected.finish(stream: streamingStandardOutput)
        return Finished(
            status: finished.status, standardOutput: collected.standardOutput,
            standardError: collected.standardError, timedOut: finished.timedOut)
    }

    /// How long a stopped step's programs have to end before their group is killed.
    static let graceSeconds = 5

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// The last lines of what a command wrote on standard error, for the failure's message.
    static func lastLines(_ text: String) -> String {
        let lines = text.split(separator: "\n").suffix(3)
        return lines.isEmpty ? "" : ": " + lines.joined(separator: " / ")
    }
}

/// A command's output as it comes: kept whole, and streamed line by line under the step's line.
private final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private let output: LaneOutput
    private let indent: String
    private let transcript: StepTranscript?
    private let secrets: [String]
    private var out = Data()
    private var err = Data()
    private var pendingOut = Data()
    private var pendingErr = Data()

    init(output: LaneOutput, indent: String, transcript: StepTranscript?, secrets: [String]) {
        self.output = output
        self.indent = indent
        self.transcript = transcript
        self.secrets = secrets
    }

    private func show(_ printed: String) {
        let line = secrets.isEmpty ? printed : Credentials.masking(secrets, in: printed)
        output.toolLine(line, indent: indent)
        transcript?.append(line)
    }

    func append(_ data: Data, standardOutput: Bool, stream: Bool) {
        guard !data.isEmpty else { return }
        lock.withLock {
            if standardOutput { out.append(data) } else { err.append(data) }
            guard stream else { return }
            var pending = standardOutput ? pendingOut : pendingErr
            pending.append(data)
            while let newline = pending.firstIndex(of: 0x0A) {
                show(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
            if standardOutput { pendingOut = pending } else { pendingErr = pending }
        }
    }

    func finish(stream: Bool) {
        lock.withLock {
            for pending in [stream ? pendingOut : Data(), pendingErr] where !pending.isEmpty {
                show(String(decoding: pending, as: UTF8.self))
            }
            pendingOut = Data()
            pendingErr = Data()
        }
    }

    var standardOutput: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    var standardError: String { lock.withLock { String(decoding: err, as: UTF8.self) } }
}

/// The lines one step's command printed, kept for the lane's reports (JUnit's `system-out`).
final class StepTranscript: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var text: String? { lock.withLock { lines.isEmpty ? nil : lines.joined(separator: "\n") } }
}

/// The values steps registered for later steps (`register: NAME`).
final class LaneValues: @unchecked Sendable {
    enum Value {
        /// A command's trimmed output.
        case text(String)
        /// An outside action's JSON object: its text, and its members.
        case object(String, [String: Any])

        var text: String {
            switch self {
            case .text(let text): text
            case .object(let text, _): text
            }
        }

        /// A member of an object, as text (strings as they are, other values as JSON).
        func member(_ key: String) -> String? {
            guard case .object(_, let members) = self, let member = members[key] else { return nil }
            if let text = member as? String { return text }
            if member is NSNull { return "" }
            if let data = try? JSONSerialization.data(
                withJSONObject: member, options: [.fragmentsAllowed, .sortedKeys])
            {
                return String(decoding: data, as: UTF8.self)
            }
            return "\(member)"
        }
    }

    private let lock = NSLock()
    private var values: [String: Value] = [:]

    func register(_ name: String, _ value: Value) { lock.withLock { values[name] = value } }
    func value(_ name: String) -> Value? { lock.withLock { values[name] } }
}
