import ShareKit

/// A change to the recipe between applies, as a person editing the file would make it.
enum RecipeMutation: Hashable, Sendable, CustomStringConvertible {
    case setField(zone: String, record: String, FieldSpec)
    case addRecord(zone: String, parent: String?, RecordSpec)
    /// The record is no longer declared (kept live unless pruned).
    case removeRecord(zone: String, record: String)
    case markAbsent(zone: String, record: String)
    case setPermission(zone: String, root: String?, user: String, Permission)
    case addParticipant(zone: String, root: String?, ParticipantSpec)
    case removeParticipant(zone: String, root: String?, user: String)
    case setPublicPermission(zone: String, root: String?, Permission)
    case shareNone(zone: String, root: String?)
    /// `share: none` on a hierarchy root and `absent: true` on one of its children, in one edit.
    case shareNoneAndAbsentChild(zone: String, root: String, child: String)
    case markZoneAbsent(zone: String)
    /// Declares the subscription, or stops declaring it.
    case toggleSubscription(SubscriptionSpec)

    var description: String {
        switch self {
        case .setField(let z, let r, let f): "set \(z)/\(r).\(f.name) = \(f.value.yaml)"
        case .addRecord(let z, let p, let r): "add record \(z)/\(r.name)" + (p.map { " under \($0)" } ?? "")
        case .removeRecord(let z, let r): "stop declaring record \(z)/\(r)"
        case .markAbsent(let z, let r): "mark record \(z)/\(r) absent"
        case .setPermission(let z, let root, let u, let p):
            "participant \(Self.address(z, root))/\(u) → \(p.recipeName)"
        case .addParticipant(let z, let root, let p): "add participant \(Self.address(z, root))/\(p.handle)"
        case .removeParticipant(let z, let root, let u): "remove participant \(Self.address(z, root))/\(u)"
        case .setPublicPermission(let z, let root, let p):
            "public_permission of \(Self.address(z, root)) → \(p.recipeName)"
        case .shareNone(let z, let root): "share: none on \(Self.address(z, root))"
        case .shareNoneAndAbsentChild(let z, let root, let c): "share: none on \(z)/\(root) and \(z)/\(c) absent"
        case .markZoneAbsent(let z): "mark zone \(z) absent"
        case .toggleSubscription(let s): "declare or stop declaring the subscription \(s.yaml)"
        }
    }

    static func address(_ zone: String, _ root: String?) -> String { root.map { "\(zone)/\($0)" } ?? zone }

    /// Applies the edit to `spec`; false (and `spec` unchanged) when its target is gone or the edit would make
    /// the recipe invalid, which happens only while shrinking removed what the edit was drawn against.
    func apply(to spec: inout RecipeSpec) -> Bool {
        var copy = spec
        guard perform(on: &copy) else { return false }
        spec = copy
        return true
    }

    private func perform(on spec: inout RecipeSpec) -> Bool {
        switch self {
        case .setField(let zone, let record, let field):
            guard live(record, zone, in: spec) else { return false }
            if let target = field.value.referenceTarget, !live(target, zone, in: spec) { return false }
            return spec.updateRecord(record, in: zone) { r in
                if let index = r.fields.firstIndex(where: { $0.name == field.name }) {
                    r.fields[index] = field
                } else {
                    r.fields.append(field)
                }
            }
        case .addRecord(let zone, let parent, let record):
            guard let z = spec.zones.firstIndex(where: { $0.name == zone }), !spec.zones[z].absent,
                !spec.records(in: zone).contains(where: { $0.record.name == record.name })
            else { return false }
            guard let parent else {
                spec.zones[z].records.append(record)
                return true
            }
            guard live(parent, zone, in: spec) else { return false }
            return spec.updateRecord(parent, in: zone) { $0.children.append(record) }
        case .removeRecord(let zone, let record):
            guard isLeaf(record, zone, in: spec) else { return false }
            return spec.removeRecord(record, in: zone)
        case .markAbsent(let zone, let record):
            guard isLeaf(record, zone, in: spec) else { return false }
            return spec.updateRecord(record, in: zone) { r in
                r = RecordSpec(name: r.name, type: r.type, absent: true)
            }
        case .setPermission(let zone, let root, let user, let permission):
            return updateShare(zone, root, in: &spec) { share in
                guard let i = share.participants.firstIndex(where: { $0.handle == user }) else { return false }
                share.participants[i].permission = permission
                return true
            }
        case .addParticipant(let zone, let root, let participant):
            guard spec.participants(ofZone: zone).contains(participant.handle) else { return false }
            return updateShare(zone, root, in: &spec) { share in
                guard share.publicPermission == .none,
                    !share.participants.contains(where: { $0.handle == participant.handle })
                else { return false }
                share.participants.append(participant)
                return true
            }
        case .removeParticipant(let zone, let root, let user):
            return updateShare(zone, root, in: &spec) { share in
                guard let i = share.participants.firstIndex(where: { $0.handle == user }) else { return false }
                share.participants.remove(at: i)
                return true
            }
        case .setPublicPermission(let zone, let root, let permission):
            return updateShare(zone, root, in: &spec) { share in
                guard share.participants.isEmpty else { return false }
                share.publicPermission = permission
                return true
            }
        case .shareNone(let zone, let root):
            return setShare(.none, zone, root, in: &spec)
        case .shareNoneAndAbsentChild(let zone, let root, let child):
            guard spec.records(in: zone).contains(where: { $0.record.name == child && $0.parent == root }),
                setShare(.none, zone, root, in: &spec)
            else { return false }
            return RecipeMutation.markAbsent(zone: zone, record: child).perform(on: &spec)
        case .markZoneAbsent(let zone):
            guard let z = spec.zones.firstIndex(where: { $0.name == zone }), !spec.zones[z].absent else { return false }
            spec.zones[z] = ZoneSpec(name: zone, absent: true)
            // A person deleting a zone stops declaring what watches it, or the recipe names a zone it deletes.
            spec.subscriptions.removeAll { $0.zone == zone }
            return true
        case .toggleSubscription(let subscription):
            guard spec.users.contains(subscription.user) else { return false }
            if let zone = subscription.zone, spec.zone(zone)?.absent != false { return false }
            // A zone is watched in its owner's private database only.
            if let zone = subscription.zone, subscription.database == "private",
                spec.owner(ofZone: zone) != subscription.user
            {
                return false
            }
            if let index = spec.subscriptions.firstIndex(where: { $0.id == subscription.id }) {
                spec.subscriptions.remove(at: index)
            } else {
                // CloudKit holds one query subscription per record type and fires_on: the loader refuses a twin.
                if spec.subscriptions.contains(where: { $0.isTwin(of: subscription) }) { return false }
                spec.subscriptions.append(subscription)
            }
            return true
        }
    }

    private func live(_ record: String, _ zone: String, in spec: RecipeSpec) -> Bool {
        guard let z = spec.zone(zone), !z.absent else { return false }
        return spec.records(in: zone).contains { $0.record.name == record && !$0.record.absent }
    }

    /// A declared record with no declared children that nothing refers to: removing it keeps the recipe valid.
    private func isLeaf(_ record: String, _ zone: String, in spec: RecipeSpec) -> Bool {
        guard live(record, zone, in: spec) else { return false }
        guard let found = spec.records(in: zone).first(where: { $0.record.name == record }) else { return false }
        return found.record.children.isEmpty && !spec.referencedNames(in: zone).contains(record)
    }

    private func updateShare(
        _ zone: String, _ root: String?, in spec: inout RecipeSpec, _ change: (inout ShareSpec) -> Bool
    ) -> Bool {
        guard let z = spec.zones.firstIndex(where: { $0.name == zone }), !spec.zones[z].absent else { return false }
        guard let root else {
            guard case .share(var share) = spec.zones[z].share, change(&share) else { return false }
            spec.zones[z].share = .share(share)
            return true
        }
        guard live(root, zone, in: spec),
            let found = spec.records(in: zone).first(where: { $0.record.name == root }),
            case .share(var share) = found.record.share, change(&share)
        else { return false }
        return spec.updateRecord(root, in: zone) { $0.share = .share(share) }
    }

    private func setShare(_ declaration: ShareDeclaration, _ zone: String, _ root: String?, in spec: inout RecipeSpec)
        -> Bool
    {
        guard let z = spec.zones.firstIndex(where: { $0.name == zone }), !spec.zones[z].absent else { return false }
        guard let root else {
            guard case .share = spec.zones[z].share else { return false }
            spec.zones[z].share = declaration
            return true
        }
        guard live(root, zone, in: spec),
            let found = spec.records(in: zone).first(where: { $0.record.name == root }),
            case .share = found.record.share
        else { return false }
        return spec.updateRecord(root, in: zone) { $0.share = declaration }
    }
}
