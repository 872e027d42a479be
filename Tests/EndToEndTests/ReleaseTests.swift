import Foundation
import SharelaneTestSupport
import Testing

/// A release: the version `sharelane --version` prints is the newest released section of CHANGELOG.md.
@Suite("Releases")
struct ReleaseTests {
    /// The version of the newest `## [X.Y.Z] - YYYY-MM-DD` section of CHANGELOG.md (`Unreleased` skipped).
    static func newestReleasedVersion() throws -> String {
        let changelog = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        for line in changelog.split(separator: "\n") where line.hasPrefix("## [") {
            guard let close = line.firstIndex(of: "]") else { continue }
            let version = String(line[line.index(line.startIndex, offsetBy: 4)..<close])
            if version == "Unreleased" { continue }
            let date = line[line.index(after: close)...]
            #expect(date.wholeMatch(of: #/ - \d{4}-\d{2}-\d{2}/#) != nil, "a released section is dated: \(line)")
            return version
        }
        throw FixtureError(message: "CHANGELOG.md has no released section (## [X.Y.Z] - YYYY-MM-DD)")
    }

    @Test("sharelane --version prints the version of CHANGELOG.md's newest release")
    func versionMatchesTheChangelog() async throws {
        let released = try Self.newestReleasedVersion()
        #expect(released.wholeMatch(of: /\d+\.\d+\.\d+/) != nil, "a semantic version: \(released)")
        let printed = try await SharelaneBinary.run(["--version"])
        #expect(printed.status == 0, "\(printed.output)")
        #expect(printed.stdout == released + "\n", "sharelane --version says \(printed.stdout)")
    }
}
