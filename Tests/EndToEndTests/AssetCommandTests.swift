import Foundation
import SharelaneTestSupport
import Testing

/// `!asset` through the command line against a real `sharelane serve` process: apply uploads the file,
/// a second plan shows no changes, `export --out` downloads the file beside the export, and the export plans
/// to no changes.
@Suite("Assets over http: (sharelane serve)")
struct AssetCommandTests {
    @Test(
        "apply uploads a recipe's !asset file; plan then shows no changes; export --out downloads it and plans to no changes"
    )
    func assetsThroughTheCommandLine() async throws {
        let scratch = try TemporaryDirectory("e2e-assets")
        let bytes = Data((0..<5000).map { UInt8(($0 * 7) % 256) })
        try bytes.write(to: scratch.url.appendingPathComponent("cover.jpg"))
        let recipe = try scratch.write(
            "album.yaml",
            """
            sharelane: 1
            name: album
            container: iCloud.com.example.Album
            users: { ann: { email: ann@example.com } }
            owner: ann
            zones:
              Album:
                records:
                  a1: { type: Photo, fields: { cover: !asset cover.jpg } }
            """)
        let server = try await ServeProcess()
        defer { server.stop() }

        let apply = try await server.run(["apply", "--yes", recipe])
        #expect(apply.status == 0, "\(apply.output)")
        #expect(server.log.contains("/assets/upload"), "the apply asked for an upload URL:\n\(server.log)")
        #expect(!server.log.contains("ticket="), "an upload URL's ticket is never logged:\n\(server.log)")
        let again = try await server.run(["plan", "--detailed-exitcode", recipe])
        #expect(again.status == 0, "a second plan shows no changes:\n\(again.output)")

        let out = scratch.url.appendingPathComponent("exported/album.yaml").path
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("exported"), withIntermediateDirectories: true)
        let export = try await server.run(["export", "--recipe", recipe, "--out", out])
        #expect(export.status == 0, "\(export.output)")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.contains("cover: !asset assets/Album/a1.cover"), "\(written)")
        let downloaded = try Data(contentsOf: scratch.url.appendingPathComponent("exported/assets/Album/a1.cover"))
        #expect(downloaded == bytes)
        let exportedPlan = try await server.run(["plan", "--detailed-exitcode", out])
        #expect(exportedPlan.status == 0, "the export plans to no changes:\n\(exportedPlan.output)")
    }

    @Test(
        "the embedded store keeps an asset's bytes: with the recipe's files gone, show names the asset by content and export --out writes the files back"
    )
    func sqliteKeepsTheBytes() async throws {
        let scratch = try TemporaryDirectory("e2e-assets-sqlite")
        let recipe = try Self.album(in: scratch)
        let store = "sqlite:" + scratch.file("store.sqlite")
        let apply = try await SharelaneBinary.run(["apply", "--yes", recipe, "--store", store])
        #expect(apply.status == 0, "\(apply.output)")
        for name in ["cover.jpg", "p1.txt", "p2.txt"] {
            try FileManager.default.removeItem(at: scratch.url.appendingPathComponent(name))
        }
        // Run where the recipe is, not in a project whose own recipe names another container.
        let show = try await SharelaneBinary.run(["show", "--store", store], in: scratch.url)
        #expect(show.output.contains("cover: asset(fnv1a64:"), "\(show.output)")
        #expect(!show.output.contains("cover.jpg"), "the store holds the bytes, not the recipe's path:\n\(show.output)")
        let out = scratch.url.appendingPathComponent("exported/album.yaml").path
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("exported"), withIntermediateDirectories: true)
        // The recipe no longer loads (its files are gone): the owner is named by email.
        let export = try await SharelaneBinary.run(
            ["export", "--store", store, "--owner", "ann@example.com", "--out", out], in: scratch.url)
        #expect(export.status == 0, "\(export.output)")
        let cover = try Data(contentsOf: scratch.url.appendingPathComponent("exported/assets/Album/a1.cover"))
        #expect(cover == Data((0..<5000).map { UInt8(($0 * 7) % 256) }))
        let exportedPlan = try await SharelaneBinary.run(["plan", "--detailed-exitcode", out, "--store", store])
        #expect(exportedPlan.status == 0, "the export plans to no changes:\n\(exportedPlan.output)")
    }

    /// A recipe with an asset field and an asset list, and its files, in a new directory.
    static func album(in scratch: TemporaryDirectory) throws -> String {
        try Data((0..<5000).map { UInt8(($0 * 7) % 256) }).write(to: scratch.url.appendingPathComponent("cover.jpg"))
        try Data("page one".utf8).write(to: scratch.url.appendingPathComponent("p1.txt"))
        try Data("page two".utf8).write(to: scratch.url.appendingPathComponent("p2.txt"))
        return try scratch.write(
            "album.yaml",
            """
            sharelane: 1
            name: album
            container: iCloud.com.example.Album
            users: { ann: { email: ann@example.com } }
            owner: ann
            zones:
              Album:
                records:
                  a1: { type: Photo, fields: { cover: !asset cover.jpg, pages: [!asset p1.txt, !asset p2.txt] } }
            """)
    }

    /// How many asset downloads the server answered so far.
    static func downloads(_ server: ServeProcess) -> Int {
        server.log.components(separatedBy: "GET /assets/download/").count - 1
    }

    @Test(
        "with serve --opaque-checksums (fileChecksum as Apple's, not computable by the client) apply converges: the plan compares by the remembered digests, a fresh cache directory by downloading once, and the export round-trips"
    )
    func opaqueChecksumsConverge() async throws {
        let scratch = try TemporaryDirectory("e2e-opaque-assets")
        let recipe = try Self.album(in: scratch)
        let server = try await ServeProcess(extraArguments: ["--opaque-checksums"])
        defer { server.stop() }
        let first = ["XDG_CACHE_HOME": scratch.file("cache-first")]

        let apply = try await server.run(["apply", "--yes", recipe], environment: first)
        #expect(apply.status == 0, "\(apply.output)")
        // What serve answered is no checksum the client computes; the client kept it with the digest it uploaded.
        let folder = scratch.url.appendingPathComponent("cache-first/sharelane/asset-digests")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.count == 1, "\(files)")
        struct Kept: Decodable { var digests: [String: String] }
        let digests = try JSONDecoder().decode(
            Kept.self, from: Data(contentsOf: folder.appendingPathComponent(files.first ?? ""))
        ).digests
        #expect(digests.count == 3, "\(digests)")
        #expect(digests.keys.allSatisfy { !$0.hasPrefix("fnv1a64:") && Data(base64Encoded: $0)?.count == 21 })
        #expect(digests.values.allSatisfy { $0.hasPrefix("fnv1a64:") })

        // A full read with the remembered digests downloads nothing and shows no changes.
        let before = Self.downloads(server)
        let again = try await server.run(
            ["plan", "--detailed-exitcode", "--refresh", "full", recipe], environment: first)
        #expect(again.status == 0, "a second plan shows no changes:\n\(again.output)")
        #expect(Self.downloads(server) == before, "the remembered digests spare downloads:\n\(server.log)")

        // A fresh cache directory converges by downloading each asset once.
        let fresh = ["XDG_CACHE_HOME": scratch.file("cache-fresh")]
        let freshPlan = try await server.run(
            ["plan", "--detailed-exitcode", "--refresh", "full", recipe], environment: fresh)
        #expect(freshPlan.status == 0, "a fresh cache directory plans to no changes:\n\(freshPlan.output)")
        #expect(Self.downloads(server) == before + 3, "each asset downloaded once:\n\(server.log)")
        let freshAgain = try await server.run(
            ["plan", "--detailed-exitcode", "--refresh", "full", recipe], environment: fresh)
        #expect(freshAgain.status == 0, "\(freshAgain.output)")
        #expect(Self.downloads(server) == before + 3, "then remembered:\n\(server.log)")

        // The export (another fresh cache) downloads the files, lists too, and plans to no changes.
        let other = ["XDG_CACHE_HOME": scratch.file("cache-export")]
        let out = scratch.url.appendingPathComponent("exported/album.yaml").path
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("exported"), withIntermediateDirectories: true)
        let export = try await server.run(["export", "--recipe", recipe, "--out", out], environment: other)
        #expect(export.status == 0, "\(export.output)")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.contains("cover: !asset assets/Album/a1.cover"), "\(written)")
        #expect(
            written.contains("pages: [!asset assets/Album/a1.pages.1, !asset assets/Album/a1.pages.2]"), "\(written)")
        let exported = scratch.url.appendingPathComponent("exported/assets/Album")
        #expect(try Data(contentsOf: exported.appendingPathComponent("a1.pages.2")) == Data("page two".utf8))
        #expect(
            try Data(contentsOf: exported.appendingPathComponent("a1.cover"))
                == Data(contentsOf: scratch.url.appendingPathComponent("cover.jpg")))
        let exportedPlan = try await server.run(["plan", "--detailed-exitcode", out], environment: other)
        #expect(exportedPlan.status == 0, "the export plans to no changes:\n\(exportedPlan.output)")

        // Other bytes are still a change.
        try Data("page two, edited".utf8).write(to: scratch.url.appendingPathComponent("p2.txt"))
        let changed = try await server.run(["plan", "--detailed-exitcode", recipe], environment: first)
        #expect(changed.status == 2, "an edited file is a change:\n\(changed.output)")
        #expect(changed.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."), "\(changed.output)")
    }

    @Test(
        "a saved plan over http: uploads its !asset files on apply; a file changed since the plan makes it stale, and nothing is written"
    )
    func savedPlanUploadsAssets() async throws {
        let scratch = try TemporaryDirectory("e2e-saved-assets")
        let recipe = try Self.album(in: scratch)
        let server = try await ServeProcess()
        defer { server.stop() }
        let cache = ["XDG_CACHE_HOME": scratch.file("cache")]
        let planFile = scratch.file("plan.json")

        let saved = try await server.run(["plan", "--out", planFile, recipe], environment: cache)
        #expect(saved.status == 0, "\(saved.output)")

        // A file edited after the plan: the plan is stale, and the apply writes nothing.
        let page = scratch.url.appendingPathComponent("p1.txt")
        try Data("page one, edited".utf8).write(to: page)
        let writes = server.log.components(separatedBy: "/records/modify").count
        let stale = try await server.run(["apply", "--yes", planFile], environment: cache)
        #expect(stale.status == 1, "\(stale.output)")
        #expect(stale.stderr.contains("stale: a file it uploads changed since it was planned"), "\(stale.output)")
        #expect(stale.stderr.contains("p1.txt changed"), "\(stale.output)")
        #expect(server.log.components(separatedBy: "/records/modify").count == writes, "\(server.log)")
        #expect(!server.log.contains("/assets/upload"), "nothing was uploaded:\n\(server.log)")

        // The planned bytes back: the saved plan applies, uploading the files.
        try Data("page one".utf8).write(to: page)
        let apply = try await server.run(["apply", "--yes", planFile], environment: cache)
        #expect(apply.status == 0, "\(apply.output)")
        #expect(apply.stdout.contains("Apply complete! Resources: 2 added"), "\(apply.output)")
        #expect(server.log.contains("/assets/upload"), "\(server.log)")
        let after = try await server.run(["plan", "--detailed-exitcode", recipe], environment: cache)
        #expect(after.status == 0, "the recipe plans to no changes after the saved plan's apply:\n\(after.output)")
    }

    @Test("an exported photo keeps the extension its bytes say, and the export plans to no changes")
    func exportedAssetsKeepTheirKind() async throws {
        let scratch = try TemporaryDirectory("e2e-assets-kind")
        // A PNG's signature, then bytes of its own.
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<2000).map { UInt8($0 % 251) })
        try png.write(to: scratch.url.appendingPathComponent("lisbon.png"))
        let recipe = try scratch.write(
            "trips.yaml",
            """
            sharelane: 1
            name: trips
            users: { ann: { email: ann@example.com } }
            owner: ann
            zones:
              Trips:
                records:
                  lisbon: { type: Trip, fields: { cover: !asset lisbon.png } }
            """)
        let store = ["--store", scratch.file("trips.sqlite")]
        let apply = try await SharelaneBinary.run(["apply", "--yes", recipe] + store)
        #expect(apply.status == 0, "\(apply.output)")
        let out = scratch.url.appendingPathComponent("exported/trips.yaml").path
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("exported"), withIntermediateDirectories: true)
        let export = try await SharelaneBinary.run(["export", "--recipe", recipe, "--out", out] + store)
        #expect(export.status == 0, "\(export.output)")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.contains("cover: !asset assets/Trips/lisbon.cover.png"), "\(written)")
        let downloaded = try Data(
            contentsOf: scratch.url.appendingPathComponent("exported/assets/Trips/lisbon.cover.png"))
        #expect(downloaded == png)
        let planned = try await SharelaneBinary.run(["plan", "--detailed-exitcode", out] + store)
        #expect(planned.status == 0, "the export plans to no changes:\n\(planned.output)")
    }
}
