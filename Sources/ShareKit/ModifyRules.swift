/// What CloudKit refuses of a `records/modify` request as a whole, before any of its operations: the request
/// answers 400 `BAD_REQUEST` and nothing of it is saved. Every store asks these functions (the embedded SQLite
/// store, and through it the emulator, which also asks them of the request as sent), so the words are the
/// live service's, spelled once.
///
/// These follow published captures of Apple's live service (shared/CLOUDKIT.md's "What the live service
/// answers"), where the reference says nothing: an `update` without its change tag is not a conflict of
/// one record but a request that cannot be read, and a default zone applies its operations one by one.
public enum ModifyRules {
    /// The refusal of an atomic batch in a default zone (`_defaultZone`, public or private): CloudKit applies a
    /// default zone's operations one by one and refuses `atomic: true` there; nil for a custom zone.
    public static func atomicInDefaultZone(_ zoneID: ZoneID) -> ShareError? {
        guard zoneID.zoneName == defaultZoneName else { return nil }
        return ShareError(.badRequest, "atomic operations not supported in default zone", subject: zoneID.zoneName)
    }

    /// The refusal of a store call asking `atomic` of `operationCount` operations in `zoneID`: an atomic batch of
    /// one operation is that operation, and is taken (a lane's write asks it, wherever the record is); a
    /// batch of several in a default zone is refused as `atomicInDefaultZone` says. The wire refuses the flag
    /// itself, whatever the count; the `http:` and `cloudkit:` clients leave it out for one operation.
    public static func atomicBatch(_ zoneID: ZoneID, atomic: Bool, operationCount: Int) -> ShareError? {
        guard atomic, operationCount > 1 else { return nil }
        return atomicInDefaultZone(zoneID)
    }

    /// The refusal of a request with an `update`, `replace` or `delete` (`OperationKind.checksChangeTag`) that
    /// sends no change tag: without one the write cannot be judged against the record as the caller read it.
    /// The forced forms take no tag. Nil when every such operation has its tag.
    public static func missingChangeTag(_ operations: some Sequence<RecordOperation>) -> ShareError? {
        for operation in operations where operation.kind.checksChangeTag {
            let tag: String?
            switch operation.item {
            case .record(let record): tag = record.changeTag
            case .share(let share): tag = share.changeTag
            }
            if tag == nil {
                return ShareError(
                    .badRequest, "missing required field 'recordChangeTag'", subject: operation.recordName)
            }
        }
        return nil
    }
}
