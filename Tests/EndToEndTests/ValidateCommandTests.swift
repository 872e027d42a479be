import Foundation
import Testing

/// `sharelane validate` as a user runs it: the built binary, its exit code, and what it prints where.
@Suite("sharelane validate")
struct ValidateCommandTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The `sharelane` executable built beside the test bundle.
    static var binary: URL? {
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent(),
            packageRoot.appendingPathComponent(".build/debug"),
        ].compactMap { $0 }
        return candidates.map { $0.appendingPathComponent("sharelane") }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }

    struct Outcome {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    static func run(_ arguments: [String]) throws -> Outcome {
        let binary = try #require(binary, "the sharelane executable is not built; run `swift build --build-tests`")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, standardOutput: String(decoding: outData, as: UTF8.self),
            standardError: String(decoding: errData, as: UTF8.self))
    }

    static func recipes() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("Recipes").path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted().map { "Recipes/\($0)" }
    }

    @Test("every recipe in Recipes/ passes, with exit 0 and a one-line summary", arguments: recipes())
    func recipeValidates(_ recipe: String) throws {
        let outcome = try Self.run(["validate", recipe])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.hasPrefix("\(recipe): OK: recipe `"))
        #expect(outcome.standardOutput.split(separator: "\n").count == 1)
        #expect(outcome.standardError.isEmpty)
    }

    @Test("an invalid recipe exits 1 and prints each error as FILE:LINE:COLUMN on standard error")
    func invalidRecipe() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sharelane-validate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("bad.yaml")
        try """
            sharelane: 1
            name: bad
            users: { alice: { email: alice@example.com } }
            zones:
              Lists:
                share: { participants: { bob: read-write } }
                recrods: {}
            """.write(to: file, atomically: true, encoding: .utf8)
        let outcome = try Self.run(["validate", file.path])
        #expect(outcome.status == 1)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError == """
            \(file.path):6:30: error: participant `bob` names no user; users are declared under `users:`
            \(file.path):7:5: error: unknown key `recrods` in zone `Lists`; did you mean `records`?
            \(file.path): 2 errors found

            """)
        #expect(!outcome.standardError.contains("Fatal") && !outcome.standardError.contains("Stack"))
    }

    @Test("--var and --env reach the recipe")
    func variables() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sharelane-validate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try "ZONE=FromEnvFile\n".write(to: scratch.appendingPathComponent(".env.ci"), atomically: true, encoding: .utf8)
        let file = scratch.appendingPathComponent("vars.yaml")
        try """
            sharelane: 1
            name: vars
            users: { "${who}": { email: someone@example.com } }
            zones: { "${ZONE}": {} }
            """.write(to: file, atomically: true, encoding: .utf8)
        let missing = try Self.run(["validate", file.path])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("unknown variable `who`"))
        let ok = try Self.run(["validate", file.path, "--var", "who=ann", "--env", "ci"])
        #expect(ok.status == 0, "\(ok.standardError)")
        let badVar = try Self.run(["validate", file.path, "--var", "who"])
        #expect(badVar.status != 0)
        #expect(badVar.standardError.contains("KEY=VALUE"))
    }
}
