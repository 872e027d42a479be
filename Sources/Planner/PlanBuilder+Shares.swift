import PlanModel
import Recipe
import ShareKit

// The shares and participants of a plan: what a declared share makes of the live one.
extension PlanBuilder {
    mutating func addShare(_ declaration: ShareDeclaration, zone: String, root: String?, live: Share?) throws {
        let path = root.map { "\(zone)/\($0)" } ?? zone
        let address = "share \(path)"
        guard case .share(let declared) = declaration else {
            if let live {
                shareDeletes.append(
                    PlannedChange(
                        action: .delete, kind: .share, address: address, zoneName: zone, recordName: root,
                        share: PlannedShare(
                            recordName: live.recordName, zoneName: zone, rootRecordName: root, title: live.title,
                            publicPermission: live.publicPermission, participants: [], url: live.url,
                            baseChangeTag: live.changeTag),
                        baseChangeTag: live.changeTag))
            }
            return
        }
        let liveParticipants = (live?.participants ?? []).filter { $0.acceptance != .removed && $0.role != .owner }
        var (planned, participantChanges) = try plannedParticipants(
            declared, zone: zone, root: root, live: live, liveParticipants: liveParticipants)
        // Public users join a public share through its URL; a recipe cannot name them (CloudKit does not mix
        // them with private participants), so while the share stays public they are kept, not removed.
        if declared.publicPermission != .none {
            for joined in liveParticipants where joined.role == .publicUser {
                planned.append(
                    PlannedParticipant(
                        handle: users.handle(of: joined.userRecordName) ?? joined.email ?? joined.userRecordName,
                        userRecordName: joined.userRecordName, email: joined.email, name: joined.name,
                        participantID: joined.participantID, permission: joined.permission, role: joined.role,
                        acceptance: joined.acceptance))
            }
        }
        let declaredUsers = Set(planned.map(\.userRecordName).filter { !$0.isEmpty })
        // A participant invited by email whose account the store would not look up (not discoverable) is
        // known by the email it was invited with.
        let declaredEmails = Set(planned.compactMap { $0.email.map(EmailAddress.normalized) })
        var removals = liveParticipants.filter {
            !declaredUsers.contains($0.userRecordName)
                && !($0.email.map { declaredEmails.contains(EmailAddress.normalized($0)) } ?? false)
        }.map {
            participantRemoval($0, path: path, zone: zone, root: root, live: live)
        }
        let share = plannedShare(declared, zone: zone, root: root, live: live, participants: planned)
        if let change = shareChange(declared, share: share, address: address, zone: zone, root: root, live: live) {
            shareSaves.append(change)
        }
        for index in participantChanges.indices { participantChanges[index].share = share }
        participantSaves += participantChanges
        for index in removals.indices { removals[index].share = share }
        participantDeletes += removals
    }

    /// The declared participants as planned, and the changes that make them so; a note for each who left and
    /// is invited again, a waiting line for each who should accept and cannot be acted as.
    private mutating func plannedParticipants(
        _ declared: DeclaredShare, zone: String, root: String?, live: Share?, liveParticipants: [Participant]
    ) throws -> (planned: [PlannedParticipant], changes: [PlannedChange]) {
        let path = root.map { "\(zone)/\($0)" } ?? zone
        // Participants who left (or were removed) stay on the share as `removed`; the recipe naming one again
        // invites them again, as a CloudKit owner adds someone who left.
        let leftParticipants = (live?.participants ?? []).filter { $0.acceptance == .removed && $0.role != .owner }
        var planned: [PlannedParticipant] = []
        var participantChanges: [PlannedChange] = []
        var waitingHere: [String] = []
        for participant in declared.participants {
            // A user the store does not have yet (empty record name) is created by apply, on stores that can.
            // Elsewhere (`cloudkit:`) the person is invited by email, as CloudKit adds a participant by lookup
            // info whether or not they are discoverable or have an account yet; the store fills the identity in.
            guard let entry = users.entry(handle: participant.handle) else {
                throw PlannerError.unknownUser(handle: participant.handle)
            }
            var userRecordName = entry.recordName ?? ""
            let liveParticipant =
                userRecordName.isEmpty
                ? Self.participant(invitedAs: entry.email, in: liveParticipants)
                : liveParticipants.first { $0.userRecordName == userRecordName }
            if userRecordName.isEmpty, let known = liveParticipant?.userRecordName { userRecordName = known }
            let acceptance = liveParticipant?.acceptance ?? .pending
            let wantsAccept = participant.accepted && acceptance != .accepted
            let accept = wantsAccept && actsAsAnyUser
            if wantsAccept && !actsAsAnyUser {
                // The link to send them, once the share has one (a new share's comes with the apply's report).
                let link = live?.url.map { "; send them \($0)" } ?? ""
                // One the store would not look up (not discoverable, or no account yet) is invited by email.
                let invited = entry.recordName == nil ? "; invited as \(entry.email)" : ""
                waitingHere.append(
                    "participant \(path)/\(participant.handle): waiting for \(participant.handle) to accept (the store cannot act as \(participant.handle))\(invited)\(link)"
                )
            }
            let plannedParticipant = PlannedParticipant(
                handle: participant.handle, userRecordName: userRecordName, email: entry.email, name: entry.name,
                participantID: liveParticipant?.participantID, permission: participant.permission,
                role: participant.role, acceptance: acceptance, accept: accept)
            planned.append(plannedParticipant)
            let participantAddress = "participant \(path)/\(participant.handle)"
            let left =
                liveParticipant != nil
                ? nil
                : userRecordName.isEmpty
                    ? Self.participant(invitedAs: entry.email, in: leftParticipants)
                    : leftParticipants.first { $0.userRecordName == userRecordName }
            if let left {
                var attributes = [
                    AttributeChange(
                        name: "status", isField: false, before: .text("left"),
                        after: .text(accept ? "invited again, accepted" : "invited again"))
                ]
                if left.permission != participant.permission {
                    attributes.append(
                        AttributeChange(
                            name: "permission", isField: false, before: .text(left.permission.recipeName),
                            after: .text(participant.permission.recipeName)))
                }
                planned[planned.count - 1].participantID = left.participantID
                notes.append(
                    "\(participantAddress): \(participant.handle) left the share; apply invites \(participant.handle) again."
                )
                participantChanges.append(
                    PlannedChange(
                        action: .update, kind: .participant, address: participantAddress, zoneName: zone,
                        recordName: root, attributes: attributes, participant: planned[planned.count - 1],
                        baseChangeTag: live?.changeTag))
            } else if let change = participantChange(
                participant, planned: plannedParticipant, live: liveParticipant, accept: accept,
                address: participantAddress, zone: zone, root: root, share: live)
            {
                participantChanges.append(change)
            }
        }
        waiting += waitingHere
        return (planned, participantChanges)
    }

    /// The participant of `participants` invited with `email` (the share keeps the lookup info it was added
    /// by), for a user whose record name the store did not give.
    static func participant(invitedAs email: String, in participants: [Participant]) -> Participant? {
        let wanted = EmailAddress.normalized(email)
        return participants.first { $0.email.map(EmailAddress.normalized) == wanted }
    }

    /// The create of a declared participant the share lacks, or the update of one it has (permission, role, an
    /// acceptance the apply makes); nil when the live participant is as declared.
    private func participantChange(
        _ participant: DeclaredParticipant, planned: PlannedParticipant, live liveParticipant: Participant?,
        accept: Bool, address: String, zone: String, root: String?, share live: Share?
    ) -> PlannedChange? {
        guard let liveParticipant else {
            return PlannedChange(
                action: .create, kind: .participant, address: address, zoneName: zone, recordName: root,
                attributes: [
                    AttributeChange(
                        name: "permission", isField: false, before: nil,
                        after: .text(participant.permission.recipeName)),
                    AttributeChange(
                        name: "role", isField: false, before: nil, after: .text(participant.role.recipeName)),
                    AttributeChange(
                        name: "accepted", isField: false, before: nil, after: .text(String(participant.accepted))),
                ],
                participant: planned, baseChangeTag: live?.changeTag)
        }
        var attributes: [AttributeChange] = []
        if liveParticipant.permission != participant.permission {
            attributes.append(
                AttributeChange(
                    name: "permission", isField: false, before: .text(liveParticipant.permission.recipeName),
                    after: .text(participant.permission.recipeName)))
        }
        if liveParticipant.role != participant.role {
            attributes.append(
                AttributeChange(
                    name: "role", isField: false, before: .text(liveParticipant.role.recipeName),
                    after: .text(participant.role.recipeName)))
        }
        if accept {
            attributes.append(
                AttributeChange(name: "accepted", isField: false, before: .text("false"), after: .text("true")))
        }
        guard !attributes.isEmpty else { return nil }
        let onlyAccepts = accept && attributes.count == 1
        return PlannedChange(
            action: .update, kind: .participant, address: address, zoneName: zone, recordName: root,
            attributes: attributes, participant: planned, baseChangeTag: live?.changeTag,
            onlyAccepts: onlyAccepts ? true : nil)
    }

    /// The removal of a live participant the recipe does not declare.
    private func participantRemoval(
        _ liveParticipant: Participant, path: String, zone: String, root: String?, live: Share?
    ) -> PlannedChange {
        let handle =
            users.handle(of: liveParticipant.userRecordName) ?? liveParticipant.email ?? liveParticipant.userRecordName
        return PlannedChange(
            action: .delete, kind: .participant, address: "participant \(path)/\(handle)", zoneName: zone,
            recordName: root,
            attributes: [
                AttributeChange(
                    name: "permission", isField: false, before: .text(liveParticipant.permission.recipeName),
                    after: nil)
            ],
            participant: PlannedParticipant(
                handle: handle, userRecordName: liveParticipant.userRecordName, email: liveParticipant.email,
                name: liveParticipant.name, participantID: liveParticipant.participantID,
                permission: liveParticipant.permission, role: liveParticipant.role,
                acceptance: liveParticipant.acceptance),
            baseChangeTag: live?.changeTag)
    }

    /// The share as planned: the live one's name, URL and tag, the declared title, permission and participants,
    /// and for a new `stable_url: true` share the short GUID derived from the recipe.
    private func plannedShare(
        _ declared: DeclaredShare, zone: String, root: String?, live: Share?, participants: [PlannedParticipant]
    ) -> PlannedShare {
        PlannedShare(
            recordName: live?.recordName ?? (root == nil ? zoneShareRecordName : nil), zoneName: zone,
            rootRecordName: root, title: declared.title ?? live?.title, publicPermission: declared.publicPermission,
            participants: participants, url: live?.url, baseChangeTag: live?.changeTag,
            proposedShortGUID: live == nil && declared.stableURL
                ? ShortGUID.derived(
                    from: [recipe.container, users.owner.email, zone, root ?? "", String(recipe.seed)].joined(
                        separator: "\u{0}"))
                : nil)
    }

    /// The share's own create or update (its title and public permission); nil when the live share has both.
    private func shareChange(
        _ declared: DeclaredShare, share: PlannedShare, address: String, zone: String, root: String?, live: Share?
    ) -> PlannedChange? {
        var shareAttributes: [AttributeChange] = []
        guard let live else {
            if let title = declared.title {
                shareAttributes.append(
                    AttributeChange(name: "title", isField: false, before: nil, after: .value(.string(title))))
            }
            shareAttributes.append(
                AttributeChange(
                    name: "public_permission", isField: false, before: nil,
                    after: .text(declared.publicPermission.recipeName)))
            return PlannedChange(
                action: .create, kind: .share, address: address, zoneName: zone, recordName: root,
                attributes: shareAttributes, share: share)
        }
        if let title = declared.title, title != live.title {
            shareAttributes.append(
                AttributeChange(
                    name: "title", isField: false, before: live.title.map { .value(.string($0)) },
                    after: .value(.string(title))))
        }
        if live.publicPermission != declared.publicPermission {
            shareAttributes.append(
                AttributeChange(
                    name: "public_permission", isField: false, before: .text(live.publicPermission.recipeName),
                    after: .text(declared.publicPermission.recipeName)))
        }
        guard !shareAttributes.isEmpty else { return nil }
        return PlannedChange(
            action: .update, kind: .share, address: address, zoneName: zone, recordName: root,
            attributes: shareAttributes, share: share, baseChangeTag: live.changeTag)
    }
}
