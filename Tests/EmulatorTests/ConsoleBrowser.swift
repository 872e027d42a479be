import Foundation
import SharelaneTestSupport

/// Headless Chromium driven from the command line, as a person's browser: one profile directory for the
/// browser's life, so the console's session cookie is kept from one page to the next.
final class ConsoleBrowser: @unchecked Sendable {
    /// `chromium` or `chromium-browser` on the PATH; nil where neither is.
    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["chromium", "chromium-browser"] {
            for directory in path.split(separator: ":") {
                let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        return nil
    }()

    /// CI sets `SHARELANE_REQUIRE_BROWSER=1`: there a missing Chromium fails the tests instead of skipping them.
    static let required = ProcessInfo.processInfo.environment["SHARELANE_REQUIRE_BROWSER"] == "1"

    /// Whether the browser tests run: with Chromium, or where it is required (and then fail without it).
    static let shouldRun = executable != nil || required

    /// Where screenshots are kept for people to look at (not compared with anything): beside the build.
    static let screenshots = BuiltProducts.packageRoot.appendingPathComponent(".build/console-screenshots")

    private let executable: URL
    private let profile: TemporaryDirectory

    /// - Throws: when Chromium is not installed (only reached where it is required).
    init() throws {
        guard let executable = Self.executable else {
            throw FixtureError(
                message: "SHARELANE_REQUIRE_BROWSER=1 but neither chromium nor chromium-browser is installed")
        }
        self.executable = executable
        profile = try TemporaryDirectory("chromium")
    }

    /// The page's DOM once loaded, as the browser serialises it.
    func dom(_ url: String) async throws -> String {
        try await run(["--dump-dom", url]).stdout
    }

    /// A screenshot of the page at 1280×900, saved as `name` in `screenshots`; returns its path.
    @discardableResult
    func screenshot(_ url: String, name: String) async throws -> URL {
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let file = Self.screenshots.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: file)
        let result = try await run(["--screenshot=\(file.path)", "--window-size=1280,900", url])
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw FixtureError(message: "chromium saved no screenshot of \(url):\n\(result.stderr)")
        }
        return file
    }

    private func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
        // A browser that hangs must not hang the suite: the run is bounded by TestDeadlines.processEnd.
        try await SharelaneBinary.runProcess(
            executable,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--hide-scrollbars", "--user-data-dir=\(profile.path)",
            ] + arguments)
    }
}
