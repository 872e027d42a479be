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
    func assetsThroughTheCommandLine() throws {
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
        let server = try ServeProcess()
        defer { server.stop() }

        let apply = try server.run(["apply", "--yes", recipe])
        #expect(apply.status == 0, "\(apply.output)")
        #expect(server.log.contains("/assets/upload"), "the apply asked for an upload URL:\n\(server.log)")
        #expect(!server.log.contains("ticket="), "an upload URL's ticket is never logged:\n\(server.log)")
        let again = try server.run(["plan", "--detailed-exitcode", recipe])
        #expect(again.status == 0, "a second plan shows no changes:\n\(again.output)")

        let out = scratch.url.appendingPathComponent("exported/album.yaml").path
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("exported"), withIntermediateDirectories: true)
        let export = try server.run(["export", "--recipe", recipe, "--out", out])
        #expect(export.status == 0, "\(export.output)")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.contains("cover: !asset assets/Album/a1.cover"), "\(written)")
        let downloaded = try Data(contentsOf: scratch.url.appendingPathComponent("exported/assets/Album/a1.cover"))
        #expect(downloaded == bytes)
        let exportedPlan = try server.run(["plan", "--detailed-exitcode", out])
        #expect(exportedPlan.status == 0, "the export plans to no changes:\n\(exportedPlan.output)")
    }
}
