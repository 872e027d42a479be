import Foundation
import SharelaneTestSupport
import Testing

/// Docs/Architecture.md as a newcomer reads it: the levels drawing and the module table say what
/// `Package.swift` says, and every file its "where each rule lives" table names is there.
@Suite struct ArchitectureDocTests {
    static let root = BuiltProducts.packageRoot
    static let page =
        (try? String(contentsOf: root.appendingPathComponent("Docs/Architecture.md"), encoding: .utf8)) ?? ""

    /// A target of the package and the names it depends on, as SwiftPM reads `Package.swift`.
    struct Target {
        var name: String
        var type: String
        var dependencies: [String]
    }

    /// The package's targets, from `swift package dump-package` (with a scratch folder of its own, so it
    /// never waits for the build's lock).
    static func targets() async throws -> [Target] {
        let scratch = try TemporaryDirectory("architecture-dump")
        let result = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swift", "package", "dump-package", "--package-path", root.path, "--scratch-path", scratch.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let targets = try #require(json["targets"] as? [[String: Any]])
        return targets.map { target in
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                for key in ["byName", "target", "product"] {
                    if let named = dependency[key] as? [Any], let name = named.first as? String { return name }
                }
                return nil
            }
            return Target(
                name: target["name"] as? String ?? "", type: target["type"] as? String ?? "", dependencies: dependencies
            )
        }
    }

    /// The drawing's levels: `level N   NAME  NAME …`.
    static func levels() -> [String: Int] {
        var levels: [String: Int] = [:]
        for line in page.split(separator: "\n") where line.hasPrefix("level ") {
            let words = line.split(separator: " ")
            guard words.count > 1, let level = Int(words[1]) else { continue }
            for name in words.dropFirst(2) { levels[String(name)] = level }
        }
        return levels
    }

    /// The module table's rows: module → (uses, libraries).
    static func rows() -> [String: (uses: Set<String>, libraries: Set<String>)] {
        var rows: [String: (uses: Set<String>, libraries: Set<String>)] = [:]
        for line in page.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 5, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { continue }
            func names(_ cell: String) -> Set<String> {
                cell == "—" ? [] : Set(cell.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            }
            rows[String(cells[1].dropFirst().dropLast())] = (names(cells[2]), names(cells[3]))
        }
        return rows
    }

    @Test(
        "every target of Package.swift is drawn, each below the modules that use it, and its table row lists its dependencies"
    )
    func theDrawingAndTheTableFollowThePackage() async throws {
        let targets = try await Self.targets().filter { $0.type != "test" }
        let names = Set(targets.map(\.name))
        #expect(names.contains("ShareKit") && names.contains("SharelaneCLI"), "\(names)")
        let levels = Self.levels()
        let rows = Self.rows()
        for target in targets {
            let level = try #require(levels[target.name], "\(target.name) is not in the levels drawing")
            let ownModules = target.dependencies.filter(names.contains)
            for dependency in ownModules {
                let below = try #require(levels[dependency], "\(dependency) is not in the levels drawing")
                #expect(below < level, "\(target.name) (level \(level)) uses \(dependency) (level \(below))")
            }
            let row = try #require(rows[target.name], "\(target.name) has no row in the module table")
            #expect(
                row.uses == Set(ownModules),
                "\(target.name) uses \(ownModules.sorted()), the table says \(row.uses.sorted())")
            let libraries = Set(target.dependencies.filter { !names.contains($0) })
            #expect(
                row.libraries == libraries,
                "\(target.name) uses \(libraries.sorted()), the table says \(row.libraries.sorted())")
        }
        #expect(Set(levels.keys) == names, "drawn but not a target: \(Set(levels.keys).subtracting(names).sorted())")
    }

    @Test("every file the \"where each rule lives\" table names exists")
    func everyNamedFileExists() throws {
        let table = try #require(Self.page.range(of: "## Where each rule, word and limit lives"))
        let text = String(Self.page[table.upperBound...])
        // `Module/File.swift` and `Module/Folder/File.swift`, as the table writes them.
        let named = text.matches(of: #/`([A-Za-z]+(?:/[A-Za-z+]+)*/[A-Za-z+]+\.swift)`/#)
        let paths = Set(named.map { String($0.output.1) })
        #expect(paths.count > 50, "\(paths.count) files named")
        let missing = paths.filter {
            // A test's file is named from the package's root, a module's file from Sources.
            !FileManager.default.fileExists(
                atPath: Self.root.appendingPathComponent($0.hasPrefix("Tests/") ? $0 : "Sources/\($0)").path)
        }
        #expect(missing.isEmpty, "named in Docs/Architecture.md but not in Sources: \(missing.sorted())")
    }
}
