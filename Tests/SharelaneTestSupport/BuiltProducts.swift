import Foundation

/// Where the package and the products built with the tests are, found from the running test bundle rather
/// than a hard-coded `.build/debug` (a release or cross build puts them elsewhere).
public enum BuiltProducts {
    /// The package root: this file is `Tests/SharelaneTestSupport/BuiltProducts.swift`.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folder that holds the test bundle and the products built beside it.
    public static let directory: URL = {
        #if os(macOS)
            for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
                return bundle.bundleURL.deletingLastPathComponent()
            }
            return Bundle.main.bundleURL
        #else
            return Bundle.main.bundleURL
        #endif
    }()

    /// The `sharelane` executable the tests run: the one `swift build --build-tests` built beside them, or the
    /// one `SHARELANE_TEST_EXECUTABLE` names. The suite builds a debug binary, and an optimised build can
    /// behave differently (every release `apply` once exited 128 where the debug build exited 0), so CI
    /// runs the suites that drive the binary once more against the release build (`Scripts/release-check.sh`).
    public static var sharelane: URL {
        if let named = ProcessInfo.processInfo.environment["SHARELANE_TEST_EXECUTABLE"], !named.isEmpty {
            return URL(fileURLWithPath: named)
        }
        return directory.appendingPathComponent("sharelane")
    }
}
