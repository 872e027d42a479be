import CloudKitWire
import Foundation
import ShareKit
import Testing

@Suite struct WireOperationTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/CloudKit.md")

    @Test func theDocsListEveryOperationAsTheCatalogueHasIt() throws {
        let text = try String(contentsOf: Self.docs, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let header = try #require(
            lines.firstIndex(of: "| operation | methods | databases | what is served | known differences from iCloud |")
        )
        let rows = lines[(header + 2)...].prefix { $0.hasPrefix("|") }
        #expect(rows.count == WireOperation.all.count, "one table row per operation")
        for operation in WireOperation.all {
            // Each row links to its endpoint in the table of the reference's dictionaries.
            let expected =
                "| [`\(operation.path)`](Reference/Dictionaries.md#endpoint-"
                + operation.path.replacingOccurrences(of: "/", with: "-") + ") | "
                + operation.methods.map(\.rawValue).joined(separator: ", ") + " | "
                + operation.databases.map(\.rawValue).joined(separator: ", ") + " |"
            #expect(rows.contains { $0.hasPrefix(expected) }, "Docs/CloudKit.md lacks the row \(expected)")
        }
    }

    @Test func everyNameIsOneOperationOfTheCatalogue() {
        // The emulator switches over the names: a name without its operation (or two operations under one
        // name) would answer the wrong request or none.
        let names = WireOperation.all.map(\.name)
        #expect(Set(names) == Set(WireOperation.Name.allCases))
        #expect(names.count == Set(names).count)
    }

    @Test func pathsAreAppleShapedAndUnique() {
        #expect(Set(WireOperation.all.map(\.path)).count == WireOperation.all.count)
        #expect(
            WireOperation.recordsModify.fullPath(container: "iCloud.a", environment: "development", database: .shared)
                == "/database/1/iCloud.a/development/shared/records/modify")
    }
}
