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

    /// The `sharelane` executable that `swift build --build-tests` built beside the tests.
    public static var sharelane: URL { directory.appendingPathComponent("sharelane") }
}
