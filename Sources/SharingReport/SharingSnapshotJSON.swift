import Foundation
import ShareKit

/// A snapshot as JSON for scripts: the users, then each share with its owner, zone, root, title, public
/// permission, URL and participants (each with the right `AccessRules` gives them now).
public enum SharingSnapshotJSON {
    struct Document: Encodable {
        struct Participant: Encodable {
            var user: String
            var email: String?
            var permission: String
            var role: String
            var status: String
            var access: String
        }
        struct Share: Encodable {
            var label: String
            var owner: String
            var zone: String
            var root: String?
            var title: String?
            var publicPermission: String
            var url: String?
            var participants: [Participant]
        }
        var users: [SharingUser]
        var shares: [Share]
    }

    public static func render(_ snapshot: SharingSnapshot) -> String {
        let document = Document(
            users: snapshot.users,
            shares: snapshot.shares.map { share in
                Document.Share(
                    label: snapshot.label(of: share), owner: share.zoneID.ownerRecordName, zone: share.zoneID.zoneName,
                    root: share.rootRecordName, title: share.title, publicPermission: share.publicPermission.recipeName,
                    url: share.url,
                    participants: share.participants.filter { $0.role != .owner }.map { p in
                        Document.Participant(
                            user: p.userRecordName, email: p.email, permission: p.permission.recipeName,
                            role: p.role.recipeName, status: p.acceptance.recipeName,
                            access: AccessCell(user: p.userRecordName, share: share).word)
                    })
            })
        return SharingSnapshotJSON.text(document)
    }

    /// `value` as the reports write JSON: pretty, keys sorted, slashes as they are, a newline at the end.
    static func text(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self) + "\n"
    }
}
