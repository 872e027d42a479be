// What a test suite names: the fixture (`SharelaneEmulator`, `SharelaneWorld`, their users), the settings
// `serve`'s options set, and the environment a world is in. The emulator's own types (its router, its
// handlers, its wire tables) stay its own: a test speaks to it over HTTP, as an app does.
@_exported import struct Emulator.EmulatorSettings
@_exported import struct Emulator.NetworkConditions
@_exported import enum ShareKit.CloudKitEnvironment
@_exported import SharelaneFixture
import Testing

/// A Swift Testing trait that gives each test (or each test of a suite) an emulator of its own, seeded from
/// a recipe and stopped afterwards; the test reads it as `SharelaneEmulator.current`.
///
/// ```swift
/// @Test(.sharelane(recipeFile: "Recipes/sharelane.yaml", lanes: ["demo"]))
/// func bobSeesTheList() async throws {
///     let emulator = try #require(SharelaneEmulator.current)
///     let token = try await emulator.webAuthToken(for: "bob")
///     …
/// }
/// ```
public struct SharelaneEmulatorTrait: TestTrait, SuiteTrait, TestScoping {
    enum Source: Sendable {
        case file(String)
        case yaml(String)
        case empty
    }

    let source: Source
    let lanes: [String]
    let variables: [String: String]
    let configuration: SharelaneEmulator.Configuration

    /// Each test of a suite gets an emulator of its own, so that none sees another's writes.
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's own scope is not a test: its tests each get theirs.
        guard testCase != nil || !test.isSuite else { return try await function() }
        let emulator: SharelaneEmulator
        switch source {
        case .file(let path):
            emulator = try await .start(
                recipeFile: path, lanes: lanes, variables: variables, configuration: configuration)
        case .yaml(let yaml):
            emulator = try await .start(
                recipeYAML: yaml, lanes: lanes, variables: variables, configuration: configuration)
        case .empty: emulator = try await .startEmpty(configuration: configuration)
        }
        do {
            try await SharelaneEmulator.$current.withValue(emulator) { try await function() }
        } catch {
            await emulator.stop()
            throw error
        }
        await emulator.stop()
    }
}

extension SharelaneEmulator {
    /// The emulator of the running test's `.sharelane(…)` trait, or nil outside one.
    @TaskLocal public static var current: SharelaneEmulator?
}

extension Trait where Self == SharelaneEmulatorTrait {
    /// An emulator seeded from the recipe file at `path` (relative to the current directory), with `lanes`
    /// run after it is applied, started with `configuration` (what `serve`'s options set).
    public static func sharelane(
        recipeFile path: String, lanes: [String] = [], variables: [String: String] = [:],
        configuration: SharelaneEmulator.Configuration = .init()
    ) -> SharelaneEmulatorTrait {
        SharelaneEmulatorTrait(source: .file(path), lanes: lanes, variables: variables, configuration: configuration)
    }

    /// An emulator seeded from a recipe written in the test.
    public static func sharelane(
        recipeYAML yaml: String, lanes: [String] = [], variables: [String: String] = [:],
        configuration: SharelaneEmulator.Configuration = .init()
    ) -> SharelaneEmulatorTrait {
        SharelaneEmulatorTrait(source: .yaml(yaml), lanes: lanes, variables: variables, configuration: configuration)
    }

    /// An emulator with nothing in it.
    public static var sharelaneEmpty: SharelaneEmulatorTrait { sharelaneEmpty(configuration: .init()) }

    /// An emulator with nothing in it, started with `configuration`.
    public static func sharelaneEmpty(configuration: SharelaneEmulator.Configuration) -> SharelaneEmulatorTrait {
        SharelaneEmulatorTrait(source: .empty, lanes: [], variables: [:], configuration: configuration)
    }
}
