import Foundation
import SharelaneTestSupport
import Testing

/// A lane's `save` step with an `!asset` field keeps (sqlite:) or uploads (http:) the file beside the recipe,
/// as an apply does: the file travels with the save, found from the lane's recipe.
@Suite("A lane's save of an !asset field")
struct LaneAssetTests {
    static func recipe(in scratch: TemporaryDirectory, bytes: Data) throws -> String {
        try bytes.write(to: scratch.url.appendingPathComponent("cover.jpg"))
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
                  a1: { type: Photo, fields: { title: First } }
            lanes:
              add-cover:
                steps:
                  - save: { zone: Album, record: a2, type: Photo, fields: { cover: !asset cover.jpg } }
            """)
    }

    /// Runs the lane, then exports with `--out` and answers the bytes the export downloaded for `a2.cover`.
    static func savedBytes(
        _ run: ([String]) throws -> SharelaneBinary.Result, recipe: String, scratch: TemporaryDirectory
    )
        throws -> Data?
    {
        let apply = try run(["apply", "--yes", recipe])
        #expect(apply.status == 0, "\(apply.output)")
        let lane = try run(["run", "add-cover", "--recipe", recipe])
        #expect(lane.status == 0, "\(lane.output)")
        let out = scratch.url.appendingPathComponent("exported/album.yaml").path
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("exported"), withIntermediateDirectories: true)
        let export = try run(["export", "--recipe", recipe, "--out", out])
        #expect(export.status == 0, "\(export.output)")
        return try? Data(contentsOf: scratch.url.appendingPathComponent("exported/assets/Album/a2.cover"))
    }

    @Test("on sqlite: the store keeps the file's bytes")
    func sqliteKeepsTheLanesFile() throws {
        let scratch = try TemporaryDirectory("e2e-lane-asset-sqlite")
        let bytes = Data((0..<3000).map { UInt8(($0 * 5) % 256) })
        let recipe = try Self.recipe(in: scratch, bytes: bytes)
        let store = ["--store", "sqlite:" + scratch.file("store.sqlite")]
        let saved = try Self.savedBytes({ try SharelaneBinary.run($0 + store) }, recipe: recipe, scratch: scratch)
        #expect(saved == bytes)
    }

    @Test("over http: the save uploads the file first")
    func httpUploadsTheLanesFile() throws {
        let scratch = try TemporaryDirectory("e2e-lane-asset-http")
        let bytes = Data((0..<3000).map { UInt8(($0 * 3) % 256) })
        let recipe = try Self.recipe(in: scratch, bytes: bytes)
        let server = try ServeProcess()
        defer { server.stop() }
        let saved = try Self.savedBytes({ try server.run($0) }, recipe: recipe, scratch: scratch)
        #expect(saved == bytes)
    }
}
