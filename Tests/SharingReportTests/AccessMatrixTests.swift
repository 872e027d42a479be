import Foundation
import ShareKit
import SharelaneTestSupport
import SharingReport
import Testing

/// The access matrix of a real store: each cell is what the store lets the user do.
@Suite struct AccessMatrixTests {
    let golden = GoldenFile(besides: #filePath)

    @Test func theMatrixSaysWhatEachUserMayDo() async throws {
        let fixture = try await SharingFixture()
        let matrix = AccessMatrix(try await fixture.snapshot())
        #expect(matrix.columns.map(\.label) == ["Board", "FamilyLists", "Trips/italy"])
        #expect(matrix.rows.map(\.label) == SharingFixture.people)
        func cell(_ handle: String, _ column: String) -> String? {
            guard let row = matrix.rows.firstIndex(where: { $0.handle == handle }),
                let index = matrix.columns.firstIndex(where: { $0.label == column })
            else { return nil }
            return matrix.cells[row][index].text
        }
        #expect(cell("alice", "FamilyLists") == "owner")
        #expect(cell("dana", "FamilyLists") == "administrator")
        #expect(cell("bob", "FamilyLists") == "write")
        #expect(cell("carol", "FamilyLists") == "none (pending: read)")
        #expect(cell("erin", "FamilyLists") == "none (removed)")
        #expect(cell("bob", "Trips/italy") == "read")
        #expect(cell("carol", "Trips/italy") == "none")
        #expect(cell("frank", "Board") == "read (public)")
        #expect(cell("bob", "Board") == "none")
    }

    /// Every cell agrees with what the store does when the user reads and writes: the matrix is the rules'
    /// answer, not a second copy of them.
    @Test func everyCellAgreesWithTheStore() async throws {
        let fixture = try await SharingFixture()
        let matrix = AccessMatrix(try await fixture.snapshot())
        let owner = fixture.users["alice"]!.recordName
        for (row, user) in matrix.rows.enumerated() where user.recordName != owner {
            for (index, column) in matrix.columns.enumerated() {
                let cell = matrix.cells[row][index]
                let zone = ZoneID(zoneName: column.share.zoneID.zoneName, ownerRecordName: owner)
                let visible = try await fixture.store.listZones(in: .shared, as: user.recordName).map(\.zoneID)
                #expect(
                    visible.contains(zone) == cell.access.canRead,
                    "\(user.label) in \(column.label): the matrix says \(cell.text)")
                let name = "probe-\(user.label)-\(index)"
                let record = Record(
                    recordName: name, recordType: "Probe", zoneID: zone, parent: column.share.rootRecordName)
                let outcome = try await fixture.store.modifyRecords(
                    [RecordOperation(.create, record)], in: zone, database: .shared, atomic: false, as: user.recordName)
                #expect(
                    (outcome[0].error == nil) == cell.access.canWrite,
                    "\(user.label) writing in \(column.label): the matrix says \(cell.text), the store answered \(outcome[0])"
                )
            }
        }
    }

    @Test func narrowingKeepsOneUserOrOneZone() async throws {
        let matrix = AccessMatrix(try await SharingFixture().snapshot())
        let bob = matrix.narrowed(toUser: "bob@example.com", zone: nil)
        #expect(bob.rows.map(\.label) == ["bob"])
        #expect(bob.cells == [[AccessCell(access: .none), bob.cells[0][1], bob.cells[0][2]]])
        #expect(bob.cells[0].map(\.text) == ["none", "write", "read"])
        let trips = matrix.narrowed(toUser: nil, zone: "Trips")
        #expect(trips.columns.map(\.label) == ["Trips/italy"])
        #expect(trips.rows.count == matrix.rows.count)
    }

    @Test func theRenderingsReadAsGolden() async throws {
        let matrix = AccessMatrix(try await SharingFixture().snapshot())
        let renderer = AccessMatrixRenderer()
        try golden.check(renderer.render(matrix, format: .text, title: "Access in memory:"), against: "access.txt")
        try golden.check(renderer.render(matrix, format: .markdown, title: "Access in memory:"), against: "access.md")
    }

    @Test func theJSONNamesEveryCell() async throws {
        let fixture = try await SharingFixture()
        let matrix = AccessMatrix(try await fixture.snapshot())
        let text = AccessMatrixRenderer().render(matrix, format: .json, title: "")
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let cells = object?["cells"] as? [[String: Any]] ?? []
        #expect(cells.count == 6 * 3)
        let carol = fixture.users["carol"]!.recordName
        let pending = cells.first {
            $0["user"] as? String == carol && ($0["column"] as? String)?.contains("FamilyLists") == true
        }
        #expect(pending?["access"] as? String == "none")
        #expect(pending?["status"] as? String == "pending")
        #expect(pending?["permission"] as? String == "read-only")
        let columns = object?["columns"] as? [[String: Any]] ?? []
        #expect(columns.map { $0["label"] as? String } == ["Board", "FamilyLists", "Trips/italy"])
        #expect(columns.first?["publicPermission"] as? String == "read-only")
    }

    @Test func theHTMLPageIsSelfContainedAndEscapesNames() async throws {
        var snapshot = try await SharingFixture().snapshot()
        snapshot.users[1].handle = "<b>bob</b>"
        let page = AccessMatrixRenderer().render(AccessMatrix(snapshot), format: .html, title: "Access & more")
        #expect(page.hasPrefix("<!doctype html>"))
        #expect(page.contains("<style>"))
        #expect(!page.contains("<link") && !page.contains("<script"))
        #expect(page.contains("&lt;b&gt;bob&lt;/b&gt;"))
        #expect(!page.contains("<b>bob</b>"))
        #expect(page.contains("<title>Access &amp; more</title>"))
        #expect(page.contains("<td class=\"none pending\">none (pending: read)</td>"))
    }

    @Test func changesBetweenTwoMatricesNameTheCellsThatDiffer() async throws {
        let fixture = try await SharingFixture()
        let before = try await fixture.snapshot()
        var after = before
        let lists = after.shares.firstIndex { $0.zoneID.zoneName == "FamilyLists" }!
        let carol = fixture.users["carol"]!.recordName
        let index = after.shares[lists].participants.firstIndex { $0.userRecordName == carol }!
        after.shares[lists].participants[index].acceptance = .accepted
        after.shares.removeAll { $0.zoneID.zoneName == "Board" }
        let changes = AccessMatrix.changes(from: AccessMatrix(before), to: AccessMatrix(after))
        #expect(
            changes.map { "\($0.user.label) \($0.column): \($0.before?.text ?? "-") → \($0.after?.text ?? "-")" } == [
                "alice Board: owner → -", "carol FamilyLists: none (pending: read) → read",
                "frank Board: read (public) → -",
            ])
    }
}
