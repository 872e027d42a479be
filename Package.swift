// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "sharelane",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "sharelane", targets: ["sharelane"]),
        .library(name: "ShareKit", targets: ["ShareKit"]),
        // sharelane serve in a Swift test suite: an in-process emulator seeded from a recipe (Docs/Testing.md).
        .library(name: "SharelaneTesting", targets: ["SharelaneTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/onevcat/Rainbow", from: "4.2.2"),
        // The programs sharelane starts, with a clean signal state and process groups (ChildProcesses).
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.7.3"),
        // `swift package generate-documentation --target ShareKit` builds ShareKit's DocC catalog.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "ShareKit"),
        // JSON text read and written by one rule: the byte cursor (RFC 8259's grammar, errors with line and
        // column), how a Double is written, and the JSON value of recordings and JSON plans.
        .target(name: "JSONText"),
        // The programs sharelane starts: `serve -- CMD`, lane steps and outside actions, git, dot.
        .target(name: "ChildProcesses", dependencies: [.product(name: "Subprocess", package: "swift-subprocess")]),
        .target(
            name: "ShareStoreSQLite",
            dependencies: [
                "ShareKit", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, which GRDB is built on: the record writes bind their values directly.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CloudKitWire",
            dependencies: [
                "ShareKit", "JSONText",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Emulator",
            dependencies: [
                "ShareKit", "CloudKitWire", "SharingReport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Recipe",
            dependencies: ["ShareKit", "Yams", .product(name: "Crypto", package: "swift-crypto")]),
        // Recordings of CloudKit exchanges and their replay against another server (`record`, `replay`): case
        // files, credential masking, key-by-key comparison. No sockets: the command line sends and listens.
        .target(name: "Parity", dependencies: ["JSONText"]),
        // Who can see what: the access matrix and the sharing graph, drawn from a store's shares; renderers
        // take data. The planner, the emulator's console and the command line draw with it.
        .target(name: "SharingReport", dependencies: ["ShareKit", "JSONText"]),
        // The plan as data: its changes, the live state it was computed from, its renderers (text, markdown,
        // JSON) and the saved-plan format, read and written here. No recipe: a plan names what it changes.
        .target(
            name: "PlanModel",
            dependencies: [
                "ShareKit", "JSONText", "SharingReport", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Applies a plan to a store and returns what it did and wrote. It cannot import Recipe: the applier
        // takes the plan, not the recipe.
        .target(
            name: "Applier",
            dependencies: ["ShareKit", "PlanModel", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "Planner",
            dependencies: [
                "ShareKit", "Recipe", "SharingReport", "PlanModel", "Applier",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Lanes",
            dependencies: [
                "ShareKit", "Recipe", "PlanModel", "Applier", "Planner", "SharingReport", "ChildProcesses",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // An emulator seeded from a recipe, with its reset point: `serve --recipe` and SharelaneTesting.
        .target(
            name: "SharelaneFixture",
            dependencies: [
                "ShareKit", "ShareStoreSQLite", "Emulator", "Recipe", "Planner", "Lanes",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "SharelaneTesting", dependencies: ["SharelaneFixture", "Emulator"]),
        .target(
            name: "SharelaneCLI",
            dependencies: [
                "ShareKit", "ShareStoreSQLite", "CloudKitWire", "Emulator", "Recipe", "PlanModel", "Applier", "Planner",
                "Lanes", "SharingReport", "SharelaneFixture", "ChildProcesses", "Parity",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Rainbow", package: "Rainbow"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .executableTarget(name: "sharelane", dependencies: ["SharelaneCLI"]),
        // Scripts/load.py's baseline: the server stack answering a stored response (not a product).
        .executableTarget(
            name: "sharelane-bench-baseline", dependencies: [.product(name: "Hummingbird", package: "hummingbird")]),
        // What the test targets share: golden files, fixture folders, temporary directories, the built
        // binary, `sharelane serve` as a process or in process. Not a product: only the tests use it.
        .target(
            name: "SharelaneTestSupport",
            dependencies: [
                "ShareKit", "ShareStoreSQLite", "Emulator", "CloudKitWire",
                .product(name: "CustomDump", package: "swift-custom-dump"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SharelaneTestSupport"
        ),
        .testTarget(name: "ShareKitTests", dependencies: ["ShareKit"]),
        .testTarget(
            name: "JSONTextTests", dependencies: ["JSONText", "CloudKitWire", "Planner", "PlanModel", "ShareKit"]),
        .testTarget(
            name: "SharingReportTests",
            dependencies: ["SharelaneTestSupport", "SharingReport", "ShareKit", "ShareStoreSQLite"],
            resources: [.copy("Golden")]
        ),
        .testTarget(
            name: "ShareStoreSQLiteTests",
            dependencies: [
                "SharelaneTestSupport",
                "ShareKit", "ShareStoreSQLite", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "RecipeTests",
            dependencies: ["SharelaneTestSupport", "Recipe", "ShareKit"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "PlannerTests",
            dependencies: [
                "SharelaneTestSupport",
                "Planner", "PlanModel", "Applier", "Recipe", "ShareKit", "ShareStoreSQLite",
                .product(name: "CustomDump", package: "swift-custom-dump"),
            ],
            resources: [.copy("Golden")]
        ),
        .testTarget(
            name: "LanesTests",
            dependencies: [
                "SharelaneTestSupport",
                "Lanes", "Planner", "Recipe", "ShareKit", "ShareStoreSQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CloudKitWireTests",
            dependencies: [
                "SharelaneTestSupport", "CloudKitWire", "ShareKit", .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Golden")]
        ),
        .testTarget(
            name: "EmulatorTests",
            dependencies: [
                "SharelaneTestSupport",
                "Emulator", "CloudKitWire", "ShareKit", "ShareStoreSQLite", "PlanModel", "Applier", "Planner", "Recipe",
                "Lanes", "SharelaneTesting", "Parity",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Chromium's history file, read after a browser test to see what the browser kept.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Browser"]
        ),
        // The schema goldens are read beside the test file (`#filePath`), not as resources.
        // The command line's own rules, in process: which exit code each kind of failure gets.
        .testTarget(name: "SharelaneCLITests", dependencies: ["SharelaneCLI"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["SharelaneTestSupport", "ShareKit", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Golden"]),
        .testTarget(
            name: "ModelCheckTests",
            dependencies: [
                "SharelaneTestSupport",
                "ShareKit", "ShareStoreSQLite", "CloudKitWire", "Emulator", "Recipe", "Planner", "PlanModel", "Applier",
                "Lanes",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ]
)
