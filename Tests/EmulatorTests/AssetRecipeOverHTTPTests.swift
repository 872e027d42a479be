import Applier
import CloudKitWire
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import SharelaneTestSupport
import Testing

/// A recipe with `!asset` files over `http:` (a real `sharelane serve`, the real client): the apply uploads
/// the files through `assets/upload`, a second plan shows no changes, an export downloads the files beside
/// the exported recipe, and the export plans to no changes.
@Suite(.serialized) struct AssetRecipeOverHTTPTests {
    typealias H = EmulatorHarness

    static let picture: [UInt8] = Array((0..<2000).map { UInt8($0 % 251) })

    @Test(
        "a recipe with !asset applies over http (the bytes uploaded), plans to no changes, exports the file with the same bytes, and the export plans to no changes"
    )
    func assetsRoundTripOverHTTP() async throws {
        let scratch = try TemporaryDirectory("asset-recipe")
        try Data(Self.picture).write(to: scratch.url.appendingPathComponent("pic.png"))
        try Data("a second page".utf8).write(to: scratch.url.appendingPathComponent("page.txt"))
        let recipePath = scratch.url.appendingPathComponent("album.yaml").path
        try """
        sharelane: 1
        name: album
        users: { alice: { email: alice@example.com } }
        owner: alice
        zones:
          Album:
            records:
              p1: { type: Photo, fields: { title: Beach, image: !asset pic.png, pages: [!asset pic.png, !asset page.txt] } }
        """.write(toFile: recipePath, atomically: true, encoding: .utf8)
        let recipe = try RecipeLoader(environment: [:]).load(path: recipePath)
        try await H.withEmulator { base in
            let store = H.store(base, for: recipe)
            let planner = Planner(store: store, logger: H.quiet)
            let report = try await Applier(store: store, logger: H.quiet).apply(try await planner.plan(recipe))
            #expect(report.failures == [], "\(report.failures)")

            // The bytes went up: the record's asset answers them from its downloadURL.
            let alice = try await store.signIn(email: "alice@example.com", name: nil)
            let looked = try await store.lookupRecords(
                ["p1"], in: ZoneID(zoneName: "Album"), database: .private, as: alice.recordName)
            guard case .saved(let record)? = looked.first, case .assetID(let text)? = record.fields["image"],
                let asset = AssetValue(text: text)
            else {
                Issue.record("no asset saved: \(looked)")
                return
            }
            #expect(asset.isDownloadURL, "\(text)")
            #expect(try await store.downloadAsset(asset) == Self.picture)
            // An ASSETID_LIST uploads each element.
            guard case .list(.assetID, let pages)? = record.fields["pages"], pages.count == 2,
                case .assetID(let second) = pages[1], let page = AssetValue(text: second)
            else {
                Issue.record("no asset list saved: \(record.fields)")
                return
            }
            #expect(try await store.downloadAsset(page) == Array("a second page".utf8))

            let again = try await planner.plan(recipe)
            #expect(again.changes == [], "\(PlanFormat.text.render(again))")

            // A changed file is a changed field.
            let changed = scratch.url.appendingPathComponent("changed")
            try FileManager.default.createDirectory(at: changed, withIntermediateDirectories: true)
            try Data(Self.picture.reversed()).write(to: changed.appendingPathComponent("pic.png"))
            try Data("a second page".utf8).write(to: changed.appendingPathComponent("page.txt"))
            let changedPath = changed.appendingPathComponent("album.yaml").path
            try FileManager.default.copyItem(atPath: recipePath, toPath: changedPath)
            let changedPlan = try await planner.plan(try RecipeLoader(environment: [:]).load(path: changedPath))
            #expect(changedPlan.changes.count == 1, "\(PlanFormat.text.render(changedPlan))")

            // The export downloads the file beside it and names it with !asset.
            let out = scratch.url.appendingPathComponent("export")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let yaml = try await Exporter(store: store, logger: H.quiet).export(
                owner: alice, name: "album",
                assets: ExportAssets(directory: out.path) { try await store.downloadAsset($0) })
            #expect(yaml.contains("image: !asset assets/Album/p1.image"), "\(yaml)")
            let downloaded = try Data(contentsOf: out.appendingPathComponent("assets/Album/p1.image"))
            #expect([UInt8](downloaded) == Self.picture)
            // An ASSETID_LIST downloads each element, written as a list of !asset.
            #expect(yaml.contains("pages: [!asset assets/Album/p1.pages.1, !asset assets/Album/p1.pages.2]"), "\(yaml)")
            #expect(try Data(contentsOf: out.appendingPathComponent("assets/Album/p1.pages.1")) == Data(Self.picture))
            #expect(
                try Data(contentsOf: out.appendingPathComponent("assets/Album/p1.pages.2"))
                    == Data("a second page".utf8))
            let exportedPath = out.appendingPathComponent("album.yaml").path
            try yaml.write(toFile: exportedPath, atomically: true, encoding: .utf8)
            let exported = try RecipeLoader(environment: [:]).load(path: exportedPath)
            let exportedPlan = try await planner.plan(exported)
            #expect(exportedPlan.changes == [], "\(PlanFormat.text.render(exportedPlan))")
        }
    }
}
