import Foundation
import Testing

@testable import ShareKit

@Suite struct StableNameTests {
    @Test func userRecordNamesAreStableAndIgnoreCase() {
        // FNV-1a 128 of "alice@example.com", computed independently.
        #expect(StableName.userRecordName(email: "alice@example.com") == "_50e0189ca0f60ad4c4efa63266de4996")
        #expect(StableName.userRecordName(email: " Alice@Example.COM\n") == "_50e0189ca0f60ad4c4efa63266de4996")
        #expect(
            StableName.userRecordName(email: "bob@example.com") != StableName.userRecordName(email: "alice@example.com")
        )
        #expect(StableName.fnv1a128Hex("") == "6c62272e07bb014262b821756295c58d")
    }
}

@Suite struct WhiteSpaceTests {
    /// The hand-written trim removes exactly what Foundation's `.whitespacesAndNewlines` trim removes, so that
    /// an address keeps naming the same user: every scalar of that set (U+200B is in it, though not White_Space)
    /// at either end, with other text around.
    @Test func trimmingAgreesWithFoundation() {
        let spaces = (0...0x10FFFF).compactMap(Unicode.Scalar.init).filter {
            CharacterSet.whitespacesAndNewlines.contains($0)
        }
        for space in spaces {
            let text = "\(space)a\(space)b\(space)"
            #expect(WhiteSpace.trimmed(text) == "a\(space)b", "U+\(String(space.value, radix: 16))")
        }
        let ends = [
            "", " ", "\t", "\n", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{1680}", "\u{2003}",
            "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{200B}", "\u{FEFF}", "x", "é",
        ]
        for lead in ends {
            for trail in ends {
                for middle in ["", "a", "A b", " \u{301}", "Ünïcödé@Example.com", "\u{2003}"] {
                    let text = lead + middle + trail
                    #expect(
                        WhiteSpace.trimmed(text) == text.trimmingCharacters(in: .whitespacesAndNewlines),
                        "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
                    #expect(
                        EmailAddress.normalized(text)
                            == text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased())
                }
            }
        }
    }
}

@Suite struct ShareURLTests {
    @Test("a random short GUID is 25 base-62 characters, every one of the 62 drawn, none twice in 2,000")
    func randomShortGUIDsAreBase62() {
        let guids = (0..<2_000).map { _ in ShortGUID.random() }
        let alphabet = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        #expect(guids.allSatisfy { $0.count == 25 && $0.allSatisfy(alphabet.contains) })
        #expect(Set(guids.joined()) == alphabet)
        #expect(Set(guids).count == guids.count)
        // Apple's short GUIDs and sharelane's derived (hex) ones are both accepted when proposed.
        #expect(ShortGUID.isWellFormed("0Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7"))
        #expect(ShortGUID.isWellFormed(ShortGUID.derived(from: "demo")))
        #expect(!ShortGUID.isWellFormed("0Ab3-Cd5Ef7Gh9Ij1Kl3Mn5Op7"))
        #expect(!ShortGUID.isWellFormed("0Ab3Cd5Ef7"))
    }

    @Test func shortGUIDsComeFromURLsOrStandAlone() {
        let guid = ShortGUID.random()
        #expect(guid.count == 25)
        #expect(ShortGUID.isWellFormed(guid))
        #expect(ShareURL.shortGUID(from: ShareURL.url(shortGUID: guid)) == guid)
        #expect(ShareURL.shortGUID(from: "https://www.icloud.com/share/\(guid)/?x=1") == guid)
        #expect(ShareURL.shortGUID(from: " \(guid) ") == guid)
        // The URL's query and fragment are cut, then its trailing slashes; the last segment is the GUID.
        let cases: [(url: String, guid: String)] = [
            ("https://www.icloud.com/share/0Ab3#Family_Lists", "0Ab3"),
            ("https://www.icloud.com/share/0Ab3//", "0Ab3"),
            ("https://www.icloud.com/share/0Ab3?from=mail/inbox", "0Ab3"),
            ("share/0Ab3", "0Ab3"),
            ("0Ab3?a/b", "0Ab3"),
            ("/", "/"),
            ("?/", "?/"),
            ("https://www.icloud.com/share/\u{e9}t\u{e9}", "\u{e9}t\u{e9}"),
        ]
        for (url, expected) in cases { #expect(ShareURL.shortGUID(from: url) == expected, "\(url)") }
        #expect(
            StableName.hierarchyShareRecordName(zoneName: "Trips", rootRecordName: "italy")
                != StableName.hierarchyShareRecordName(zoneName: "Trips", rootRecordName: "spain"))
    }
}

@Suite struct AccessRulesTests {
    let owner = "_alice"
    func share(_ participants: [Participant], public permission: Permission = .none) -> Share {
        Share(
            recordName: zoneShareRecordName, zoneID: ZoneID(zoneName: "Lists"), publicPermission: permission,
            ownerRecordName: owner, participants: participants)
    }

    @Test func accessFollowsAcceptanceAndPermission() {
        let s = share([
            Participant(userRecordName: "_rw", permission: .readWrite, acceptance: .accepted),
            Participant(userRecordName: "_ro", permission: .readOnly, acceptance: .accepted),
            Participant(userRecordName: "_pending", permission: .readWrite, acceptance: .pending),
            Participant(userRecordName: "_admin", role: .administrator, permission: .readWrite, acceptance: .accepted),
        ])
        #expect(AccessRules.access(caller: owner, zoneOwner: owner, share: nil) == .owner)
        #expect(AccessRules.access(caller: "_rw", zoneOwner: owner, share: s) == .readWrite)
        #expect(AccessRules.access(caller: "_ro", zoneOwner: owner, share: s) == .readOnly)
        #expect(AccessRules.access(caller: "_pending", zoneOwner: owner, share: s) == .none)
        #expect(AccessRules.access(caller: "_admin", zoneOwner: owner, share: s) == .administrator)
        #expect(AccessRules.create(caller: "_rw", zoneOwner: owner, share: nil, subject: "x")?.code == .accessDenied)
        #expect(
            AccessRules.delete(caller: "_rw", zoneOwner: owner, share: s, isRoot: true, subject: "x")?.code
                == .accessDenied)
        #expect(AccessRules.delete(caller: "_rw", zoneOwner: owner, share: s, isRoot: false, subject: "x") == nil)
        #expect(AccessRules.update(caller: "_ro", zoneOwner: owner, share: s, subject: "x")?.code == .accessDenied)
    }

    @Test func administratorsCannotTouchOtherAdministrators() {
        let existing = share([
            Participant(userRecordName: "_a1", role: .administrator, permission: .readWrite, acceptance: .accepted),
            Participant(userRecordName: "_a2", role: .administrator, permission: .readWrite, acceptance: .accepted),
            Participant(userRecordName: "_u", permission: .readOnly, acceptance: .accepted),
        ])
        var dropAdmin = existing
        dropAdmin.participants.remove(at: 1)
        #expect(
            AccessRules.updateShare(
                caller: "_a1", zoneOwner: owner, existing: existing, proposed: dropAdmin, subject: "s")?.code
                == .accessDenied)
        #expect(
            AccessRules.updateShare(
                caller: owner, zoneOwner: owner, existing: existing, proposed: dropAdmin, subject: "s") == nil)
        var promote = existing
        promote.participants[2].role = .administrator
        #expect(
            AccessRules.updateShare(
                caller: "_a1", zoneOwner: owner, existing: existing, proposed: promote, subject: "s")?.code
                == .accessDenied)
        var changeUser = existing
        changeUser.participants[2].permission = .readWrite
        #expect(
            AccessRules.updateShare(
                caller: "_a1", zoneOwner: owner, existing: existing, proposed: changeUser, subject: "s") == nil)
    }

    @Test func publicUsersGetThePublicPermission() {
        let s = share(
            [Participant(userRecordName: "_p", role: .publicUser, permission: .readWrite, acceptance: .accepted)],
            public: .readOnly)
        #expect(AccessRules.access(caller: "_p", zoneOwner: owner, share: s) == .readOnly)
        #expect(AccessRules.accept(caller: "_anyone", zoneOwner: owner, share: s, subject: "s") == nil)
        #expect(
            AccessRules.accept(caller: "_anyone", zoneOwner: owner, share: share([]), subject: "s")?.code
                == .accessDenied)
        let mixed = share([Participant(userRecordName: "_u", acceptance: .accepted)], public: .readOnly)
        #expect(AccessRules.validateParticipants(of: mixed, subject: "s")?.code == .badRequest)
    }

    @Test("short GUIDs are random: a thousand of them are all different, and none is derived from names")
    func shortGUIDsAreRandom() {
        let guids = Set((0..<1000).map { _ in ShortGUID.random() })
        #expect(guids.count == 1000)
        #expect(guids.allSatisfy(ShortGUID.isWellFormed))
        #expect(ShortGUID.derived(from: "a") == ShortGUID.derived(from: "a"))
        #expect(ShortGUID.derived(from: "a") != ShortGUID.derived(from: "b"))
        #expect(!ShortGUID.isWellFormed("ABC"))
        #expect(!ShortGUID.isWellFormed("../../etc/passwd0123"))
    }
}
