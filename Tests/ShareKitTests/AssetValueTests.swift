import ShareKit
import Testing

@Suite struct AssetValueTests {
    @Test("an ASSETID text reads back as it was written, every part kept")
    func roundTrip() throws {
        let value = AssetValue(
            location: "http://127.0.0.1:8420/assets/download/fnv1a64:0011223344556677/${f}",
            checksum: "fnv1a64:0011223344556677", size: 12, receipt: "r/1+=", wrappingKey: "k==",
            referenceChecksum: "c")
        #expect(AssetValue(text: value.text) == value)
        let recipe = try #require(AssetValue(text: "photos/a#b.png#fnv1a64:0011223344556677"))
        #expect(recipe.location == "photos/a#b.png")
        #expect(recipe.isFilePath && recipe.isComputedChecksum && recipe.size == nil)
        #expect(AssetValue(text: "asset-1") == nil, "a plain name has no checksum")
        #expect(AssetValue(text: "name#") == nil)
    }

    @Test(
        "assets compare by content: a recipe's file and a read's download URL with the same checksum are the same value"
    )
    func sameContent() {
        let file = FieldValue.assetID("pic.png#fnv1a64:0011223344556677")
        let read = FieldValue.assetID("http://h/assets/download/x/${f}#fnv1a64:0011223344556677;size=3")
        let other = FieldValue.assetID("pic.png#fnv1a64:7766554433221100")
        #expect(file.isSameValue(as: read))
        #expect(!file.isSameValue(as: other))
        #expect(
            FieldValue.list(elementType: .assetID, [file]).isSameValue(as: .list(elementType: .assetID, [read])))
        #expect(FieldValue.assetID("a").isSameValue(as: .assetID("a")))
        #expect(!FieldValue.assetID("a").isSameValue(as: .assetID("b")))
        #expect(FieldValue.string("x").isSameValue(as: .string("x")))
    }

    @Test(
        "a service's checksum the client cannot compute compares by the remembered content digest, and is the same as a file with those bytes"
    )
    func opaqueChecksumsCompareByContent() {
        let file = FieldValue.assetID("pic.png#fnv1a64:0011223344556677")
        let known = FieldValue.assetID(
            "https://cdn/x/${f}#AXVpZm9vYmFyYmF6cXV4cXV1eDEy;size=3;content=fnv1a64:0011223344556677")
        let unknown = FieldValue.assetID("https://cdn/x/${f}#AXVpZm9vYmFyYmF6cXV4cXV1eDEy;size=3")
        let edited = FieldValue.assetID("pic.png#fnv1a64:7766554433221100")
        #expect(file.isSameValue(as: known))
        #expect(known.isSameValue(as: file))
        #expect(!edited.isSameValue(as: known))
        #expect(!file.isSameValue(as: unknown), "without the digest, a file and an opaque checksum differ")
        #expect(known.isSameValue(as: unknown), "two reads of one checksum are the same asset")
        let parsed = AssetValue(text: "#AXVp;size=3;receipt=r;content=fnv1a64:00")
        #expect(parsed?.content == "fnv1a64:00" && parsed?.contentDigest == "fnv1a64:00")
        #expect(AssetValue(text: parsed?.text ?? "") == parsed)
    }

    @Test("plans show a kept asset by checksum and size, a recipe's file by its path and checksum")
    func display() {
        let read = FieldValue.assetID("http://h/assets/download/x/${f}#fnv1a64:0011223344556677;size=3")
        #expect(read.displayString == "asset(fnv1a64:0011223344556677, 3 bytes)")
        #expect(FieldValue.assetID("pic.png#fnv1a64:00").displayString == "asset(pic.png#fnv1a64:00)")
        #expect(FieldValue.assetID("asset-1").displayString == "asset(asset-1)")
    }

    @Test("FNV-1a 64 checksums: the empty input is the offset basis; text gives fnv1a64:HEX")
    func checksum() {
        #expect(FNV1a64.checksum(of: [UInt8]()) == "fnv1a64:cbf29ce484222325")
        #expect(FNV1a64.checksum(of: Array("a".utf8)) == "fnv1a64:af63dc4c8601ec8c")
    }
}
