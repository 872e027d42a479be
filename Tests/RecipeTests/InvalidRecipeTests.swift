import Foundation
import SharelaneTestSupport
import Recipe
import Testing

/// One fixture per error case; each states its expected errors in `# error: [FILE:]LINE:COLUMN: MESSAGE`
/// comments, and the loader must report exactly those, at those places.
@Suite("Invalid recipes")
struct InvalidRecipeTests {
    struct Expected: CustomStringConvertible {
        var file: String?
        var line: Int
        var column: Int
        var message: String
        var description: String { "\(file.map { "\($0):" } ?? "")\(line):\(column): \(message)" }
    }

    static func parse(_ spec: String) -> Expected? {
        var rest = Substring(spec)
        var file: String? = nil
        if let colon = rest.firstIndex(of: ":"), Int(rest[..<colon]) == nil {
            file = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        let tail = rest.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard tail.count == 3, let line = Int(tail[0]), let column = Int(tail[1]) else { return nil }
        return Expected(file: file, line: line, column: column, message: tail[2].trimmingCharacters(in: .whitespaces))
    }

    @Test("reports the expected errors", arguments: try Fixtures.names(in: "invalid"))
    func fixture(_ name: String) throws {
        let url = try Fixtures.url("invalid", name)
        let expected = try Fixtures.header("error", in: url).map {
            try #require(Self.parse($0), "bad expectation \($0)")
        }
        #expect(!expected.isEmpty, "fixture \(name) states no `# error:`")
        let errors = loadErrors(url.path)
        #expect(
            errors.count == expected.count,
            "expected \(expected.count) errors, got:\n\(errors.map(\.description).joined(separator: "\n"))")
        for want in expected {
            let match = errors.first { error in
                guard let location = error.location else { return false }
                let fileOK = location.file.hasSuffix(want.file ?? "\(name).yaml")
                return fileOK && location.line == want.line && location.column == want.column
                    && error.message.contains(want.message)
            }
            #expect(match != nil, "missing \(want)\ngot:\n\(errors.map(\.description).joined(separator: "\n"))")
        }
    }

    @Test("errors print as FILE:LINE:COLUMN: error: MESSAGE, with the path as given")
    func printedForm() throws {
        let errors = loadErrors(
            yaml: "sharelane: 1\nname: x\nusers: { alice: { email: a@example.com } }\nzone: {}\n",
            file: "Recipes/x.yaml")
        #expect(
            errors.map(\.description) == [
                "Recipes/x.yaml:4:1: error: unknown key `zone` in the recipe; did you mean `zones`?"
            ])
    }

    @Test("a missing file says so, naming the path as given")
    func missingFile() {
        let errors = loadErrors("does/not/exist.yaml")
        #expect(errors.map(\.description) == ["does/not/exist.yaml: error: no such file; check the path"])
    }

    @Test("--env NAME without .env.NAME is an error")
    func missingEnvFile() throws {
        let scratch = try TemporaryDirectory("recipe")
        let path = try scratch.write("r.yaml", "sharelane: 1\nname: r\nusers: { alice: { email: a@example.com } }\n")
        let errors = loadErrors(path, loader: RecipeLoader(environment: [:], envName: "staging"))
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains(".env.staging") == true)
    }

    @Test("an error in an included file that cannot be read points at the include")
    func unreadableInclude() {
        let errors = loadErrors(
            yaml: "sharelane: 1\nname: x\ninclude: [missing.yaml]\nusers: { alice: { email: a@example.com } }\n",
            file: "x.yaml")
        #expect(
            errors.map(\.description) == [
                "x.yaml:3:11: error: included file missing.yaml: no such file; check the path"
            ])
    }
}

extension InvalidRecipeTests {
    @Test("an include cycle shows the chain of files")
    func includeCycleChain() throws {
        let url = try Fixtures.url("invalid", "include-cycle")
        let message = try #require(loadErrors(url.path).first?.message)
        let files = message.split(separator: "→").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(files.count == 3)
        #expect(files.first?.hasSuffix("include-cycle/a.yaml") == true)
        #expect(files.dropFirst().first?.hasSuffix("include-cycle/b.yaml") == true)
        #expect(files.last?.hasSuffix("include-cycle/a.yaml") == true)
    }
}
