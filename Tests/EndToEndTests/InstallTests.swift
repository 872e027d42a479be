import Foundation
import SharelaneTestSupport
import Testing

/// `make install` (Scripts/install.sh) with the binary the tests were built with: it puts the binary, its
/// man page and its completions under PREFIX, the installed binary runs, and `make uninstall` removes them.
@Suite("Installing")
struct InstallTests {
    @Test(
        "make install puts the binary, man page and completions under PREFIX; the binary runs; uninstall removes them")
    func installIntoAPrefix() async throws {
        let prefix = try TemporaryDirectory("install")
        let make = URL(fileURLWithPath: "/usr/bin/make")
        try #require(FileManager.default.isExecutableFile(atPath: make.path), "make is needed to install")
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        let variables = ["PREFIX=\(prefix.path)", "CONFIGURATION=debug", "BINARY=\(SharelaneBinary.executable.path)"]
        let installed = try await SharelaneBinary.runProcess(
            make, ["install"] + variables, in: BuiltProducts.packageRoot, environment: environment)
        #expect(installed.status == 0, "\(installed.output)")

        let files = [
            "bin/sharelane", "share/man/man1/sharelane.1", "share/bash-completion/completions/sharelane",
            "share/zsh/site-functions/_sharelane", "share/fish/vendor_completions.d/sharelane.fish",
            "share/sharelane/recipe.schema.json", "share/sharelane/reference-dictionaries.json",
        ]
        for file in files { #expect(FileManager.default.fileExists(atPath: prefix.file(file)), "\(file)") }
        let page = try String(contentsOfFile: prefix.file("share/man/man1/sharelane.1"), encoding: .utf8)
        #expect(page.contains(".TH SHARELANE 1"), "\(page.prefix(300))")
        #expect(page.contains(".SS \"sharelane init\""), "every command has its section")
        #expect(page.contains("\\fB\\-\\-detailed\\-exitcode\\fR"), "with its options")
        let bash = try String(
            contentsOfFile: prefix.file("share/bash-completion/completions/sharelane"), encoding: .utf8)
        #expect(bash.contains("init"), "the completion knows the commands")

        let binary = URL(fileURLWithPath: prefix.file("bin/sharelane"))
        let version = try await SharelaneBinary.runProcess(binary, ["--version"], environment: environment)
        let built = try await SharelaneBinary.run(["--version"])
        #expect(version.status == 0 && version.stdout == built.stdout, "\(version.output)")
        let validated = try await SharelaneBinary.runProcess(
            binary, ["validate", "Recipes/sharelane.yaml"], in: BuiltProducts.packageRoot, environment: environment)
        #expect(validated.status == 0, "\(validated.output)")
        // init copies the installed schema beside the recipe and points the editor at it, relatively.
        let project = try TemporaryDirectory("install-init")
        let initialized = try await SharelaneBinary.runProcess(
            binary, ["init"], in: project.url, environment: environment)
        #expect(initialized.status == 0, "\(initialized.output)")
        let recipe = try String(contentsOfFile: project.file("sharelane.yaml"), encoding: .utf8)
        #expect(recipe.hasPrefix("# yaml-language-server: $schema=recipe.schema.json\n"), "\(recipe.prefix(200))")
        #expect(
            FileManager.default.contents(atPath: project.file("recipe.schema.json"))
                == FileManager.default.contents(atPath: prefix.file("share/sharelane/recipe.schema.json")))

        // conformance reads the installed table of the reference's dictionaries, outside any checkout.
        let checked = try await SharelaneBinary.runProcess(
            binary, ["conformance", "--store", "memory:"], in: project.url, environment: environment)
        #expect(checked.status == 0 && checked.stdout.contains(" passed, 0 failed"), "\(checked.output)")

        let removed = try await SharelaneBinary.runProcess(
            make, ["uninstall"] + variables, in: BuiltProducts.packageRoot, environment: environment)
        #expect(removed.status == 0, "\(removed.output)")
        for file in files { #expect(!FileManager.default.fileExists(atPath: prefix.file(file)), "\(file) removed") }
    }
}
