import Foundation
import SharelaneTestSupport
import Testing

/// A web app in headless Chromium, on its own loopback origin, signs in through the emulator's sign-in popup
/// and saves, queries and reads back through a real `sharelane serve`, as an app built on CloudKit JS does
/// (Browser/app.html speaks the wire as CloudKit JS does; no Apple code runs). Browser/popup-driver.mjs
/// clicks and types as a person would, over the Chrome DevTools Protocol. The screenshot is kept in
/// `.build/console-screenshots/browser-sign-in.png` for people to look at.
@Suite(
    .enabled(
        if: ConsoleBrowser.shouldRun,
        "Chromium is not installed (apt-get install chromium); SHARELANE_REQUIRE_BROWSER=1 makes this a failure"))
struct BrowserSignInTests {
    /// `node` on the PATH; nil where it is not.
    static let node: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("node") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    @Test("a page on another origin signs in through the popup, then saves, queries and reads back")
    func popupSignInThenSaveAndQuery() async throws {
        let chromium = try #require(ConsoleBrowser.executable, "SHARELANE_REQUIRE_BROWSER=1 but Chromium is missing")
        let node = try #require(Self.node, "node is needed to drive the browser")
        let server = try await ServeProcess(apiToken: "browser-sign-in-token")
        defer { server.stop() }
        try FileManager.default.createDirectory(at: ConsoleBrowser.screenshots, withIntermediateDirectories: true)
        let screenshot = ConsoleBrowser.screenshots.appendingPathComponent("browser-sign-in.png")
        try? FileManager.default.removeItem(at: screenshot)
        let driver = BuiltProducts.packageRoot.appendingPathComponent("Tests/EmulatorTests/Browser/popup-driver.mjs")
        let result = try await SharelaneBinary.runProcess(
            node,
            [
                driver.path, chromium.path, server.url, server.apiToken, screenshot.path,
            ])
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let report = try #require(
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            "the driver said: \(result.stdout)\n\(result.stderr)\nserve:\n\(server.log)")
        let steps = report["steps"] as? [String] ?? []
        #expect(report["status"] as? String == "done", "\(steps)\n\(result.stderr)")
        #expect(result.status == 0)
        // Two origins: the app's own and the emulator's, where the popup signed in.
        #expect(report["appOrigin"] as? String != report["popupOrigin"] as? String)
        #expect(report["popupOrigin"] as? String == server.url)
        #expect(
            steps == [
                "ok users/caller answers 421 AUTHENTICATION_REQUIRED", "ok the sign-in popup handed over a session",
                "ok signed in as mei@example.com", "ok zone Groceries created",
                "ok saved 2 items (eggs' price a DOUBLE)", "ok query by price: milk, eggs", "ok read back: Eggs at 3",
            ])
        #expect(FileManager.default.fileExists(atPath: screenshot.path))
        // The browser's preflight of the JSON request reached serve and was answered.
        #expect(server.log.contains("OPTIONS"), "\(server.log)")
    }

    /// An app served over https (a certificate made for the run), allowed with `--allow-origin`: Chromium's
    /// default referrer policy sends no `Referer` when the https page opens serve's http sign-in page, so the
    /// popup learns its opener from the ticket of the refused request the page made.
    @Test("an https app of an allowed origin signs in through the popup with no Referer sent")
    func httpsAppSignsInWithoutReferer() async throws {
        let chromium = try #require(ConsoleBrowser.executable, "SHARELANE_REQUIRE_BROWSER=1 but Chromium is missing")
        let node = try #require(Self.node, "node is needed to drive the browser")
        let appOrigin = "https://app.example.test:\(try FreePort.loopback())"
        let server = try await ServeProcess(apiToken: "https-app-token", extraArguments: ["--allow-origin", appOrigin])
        defer { server.stop() }
        try FileManager.default.createDirectory(at: ConsoleBrowser.screenshots, withIntermediateDirectories: true)
        let screenshot = ConsoleBrowser.screenshots.appendingPathComponent("browser-sign-in-https.png")
        let driver = BuiltProducts.packageRoot.appendingPathComponent("Tests/EmulatorTests/Browser/popup-driver.mjs")
        let result = try await SharelaneBinary.runProcess(
            node, [driver.path, chromium.path, server.url, server.apiToken, screenshot.path, appOrigin])
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let report = try #require(
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            "the driver said: \(result.stdout)\n\(result.stderr)\nserve:\n\(server.log)")
        let steps = report["steps"] as? [String] ?? []
        #expect(report["status"] as? String == "done", "\(report)\n\(result.stderr)\nserve:\n\(server.log)")
        #expect(report["appOrigin"] as? String == appOrigin)
        // What makes this case: the popup was told nothing of the page that opened it.
        #expect(report["referer"] as? String == "", "\(report)")
        #expect(steps.contains("ok the sign-in popup handed over a session"), "\(steps)")
        #expect(steps.last == "ok read back: Eggs at 3", "\(steps)")
    }
}
