import Foundation
import PlanModel
import Planner
import ShareKit
import SharingReport
@preconcurrency import Rainbow

/// What the process is attached to: whether standard input and output are terminals, and whether to colour.
enum Terminal {
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) != 0 }
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// Colour on a terminal, unless `NO_COLOR` is set (to anything but the empty string).
    static var wantsColor: Bool {
        let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        return stdoutIsTerminal && !noColor
    }

    /// Turns Rainbow's output on or off to match `wantsColor`, and says which.
    @MainActor
    static func configureColor() -> Bool {
        let colors = wantsColor
        Rainbow.enabled = colors
        Rainbow.outputTarget = colors ? .console : .unknown
        return colors
    }

    /// The plan's text style: additions green, updates yellow, deletions red, waiting lines cyan and the
    /// summary bold where `wantsColor`; plain otherwise.
    @MainActor
    static func planStyle() -> TextStyle {
        guard configureColor() else { return .plain }
        return TextStyle(
            change: { text, action in
                switch action {
                case .create: text.green
                case .update: text.yellow
                case .delete: text.red
                }
            }, waiting: { $0.cyan }, summary: { $0.bold })
    }

    /// The access matrix's style: owners bold, administrators magenta, write green, read cyan, none dim,
    /// pending yellow and removed red, where `wantsColor`; plain otherwise.
    @MainActor
    static func accessStyle() -> AccessStyle {
        guard configureColor() else { return .plain }
        return AccessStyle(
            cell: { text, cell in
                switch (cell.status, cell.access) {
                case (.pending?, _): text.yellow
                case (.removed?, _): text.red
                case (_, .owner): text.bold
                case (_, .administrator): text.magenta
                case (_, .readWrite): text.green
                case (_, .readOnly): text.cyan
                case (_, .none): text.dim
                }
            }, heading: { $0.bold })
    }

    /// Writes a line to standard error, secrets masked and control characters escaped (an error quotes
    /// names and values from recipes and stores).
    static func printError(_ line: String) {
        let text = DisplayText.escaped(SecretMask.apply(line), keepingNewlines: true)
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Writes text to standard output, secrets masked.
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(SecretMask.apply(text).utf8))
    }
}

/// Standard output as a text stream, written in pieces of 64 KB: a large plan goes out as it is rendered,
/// without being held whole in memory.
struct StandardOutput: TextOutputStream {
    private var buffer: [UInt8] = []

    mutating func write(_ string: String) {
        buffer.append(contentsOf: string.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes out what is buffered; call it when done.
    mutating func flush() {
        guard !buffer.isEmpty else { return }
        if SecretMask.secrets.isEmpty {
            FileHandle.standardOutput.write(Data(buffer))
        } else {
            Terminal.write(String(decoding: buffer, as: UTF8.self))
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
