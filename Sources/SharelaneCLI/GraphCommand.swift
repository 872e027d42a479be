import ArgumentParser
import ChildProcesses
import Foundation
import Logging
import Recipe
import ShareKit
import SharingReport

/// `sharelane graph`: the sharing graph drawn to an SVG or PNG file by Graphviz.
struct GraphCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Draw the sharing graph as SVG or PNG (needs Graphviz's dot).",
        discussion: """
            Owners → the zones and hierarchy roots they share → participants, edges labelled with the \
            permission and status, public permissions shown, as `sharelane show --format dot` writes it, drawn \
            by Graphviz's `dot` (install it with `apt-get install graphviz` or `brew install graphviz`). The \
            file's extension (.svg or .png) chooses the format. Reading changes nothing.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane graph --out sharing.svg",
        "sharelane graph Recipes/trips.yaml > sharing.svg",
        "sharelane graph --as bob --out bob.png",
        "sharelane show --format dot | dot -Tpdf -o sharing.pdf",
    ]

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    @Option(
        help: ArgumentHelp(
            "The file to draw: FILE.svg or FILE.png (default: SVG on standard output).", valueName: "file"))
    var out: String?

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp("Only the shares this user owns or takes part in.", valueName: "user"))
    var user: UserArgument?

    @Option(help: ArgumentHelp("Only the shares of the zone with this name.", valueName: "name"))
    var zone: String?

    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var world: WorldOptions
    @OptionGroup var logging: LoggingOptions

    /// The formats `dot -T` is asked for, by file extension.
    static let formats = ["svg": "svg", "png": "png"]

    func validate() throws {
        guard let out else { return }
        let ext = URL(fileURLWithPath: out).pathExtension.lowercased()
        guard Self.formats[ext] != nil else {
            throw ValidationError(
                "--out \(out): name an .svg or .png file (for other formats, `sharelane show --format dot | dot -T…`)")
        }
    }

    func run() async throws {
        let logger = Logger(label: "sharelane.graph")
        guard let dot = Self.findDot() else {
            throw CommandFailure.input(
                "Graphviz's `dot` is not installed, so the graph cannot be drawn: install it (`apt-get install graphviz`, `brew install graphviz`), or write the graph as text with `sharelane show --format dot` or `--format mermaid`"
            )
        }
        let loaded = try recipeSelection.loadIfAny(recipe)
        let store = try storeOptions.open(
            for: loaded, container: world.container, environment: world.environment, reading: true, logger: logger)
        let snapshot = try await ShowCommand.sharingSnapshot(of: store, recipe: loaded, user: user, zone: zone)
        let source = SharingGraphRenderer().dot(SharingGraph(snapshot), title: "Sharing in \(store.displayName)")
        let shares = "\(snapshot.shares.count) share\(snapshot.shares.count == 1 ? "" : "s")"
        guard let out else {
            // Without --out the drawing goes where a pipe or a redirection takes it, as `dot` itself does.
            try await Self.draw(source, with: dot, format: "svg", to: nil)
            Terminal.printError(
                "Drew the sharing graph (\(shares)) as SVG on standard output; --out FILE.svg|FILE.png writes a file.")
            return
        }
        let format = Self.formats[URL(fileURLWithPath: out).pathExtension.lowercased()] ?? "svg"
        try await Self.draw(source, with: dot, format: format, to: out)
        Terminal.printError("Drew the sharing graph (\(shares)) to \(out).")
    }

    /// `dot` on the PATH, if there is one.
    static func findDot() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("dot")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Runs `dot -TFORMAT -o FILE` with `source` on its standard input.
    /// - Throws: `CommandFailure` with what dot said when it fails.
    static func draw(_ source: String, with dot: URL, format: String, to file: String?) async throws {
        let finished: ChildProcess.Finished
        do {
            finished = try await ChildProcess(
                [dot.path, "-T\(format)"] + (file.map { ["-o", $0] } ?? []), ownGroup: false
            ).run(input: .data(Data(source.utf8)), output: .collected(received: nil))
        } catch {
            throw CommandFailure.input("cannot run \(dot.path): \(error)")
        }
        guard finished.status == 0 else {
            throw CommandFailure.input(
                "dot could not draw \(file ?? "the graph") (exit \(finished.status)): "
                    + String(decoding: finished.standardError, as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if file == nil { FileHandle.standardOutput.write(finished.standardOutput) }
    }

}
