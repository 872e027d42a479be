import CloudKitWire
import Foundation
import ShareKit

/// What the emulator keeps to act as a test fixture: each world's reset point (the state after seeding),
/// the named snapshots, and the seeded recipes' people.
actor FixtureState {
    var resetPoints: [StoreWorld: any WorldSnapshot] = [:]
    /// Worlds whose reset point is the state they were in when serve started, taken the first time something
    /// may change them: a copy of every world at start-up would open all of them at once and hold them all in
    /// memory, where a test suite touches a few.
    var pendingPoints: Set<StoreWorld> = []
    var named: [String: [StoreWorld: any WorldSnapshot]] = [:]
    var users: [StoreWorld: [FixtureUser]] = [:]

    func setResetPoint(_ snapshot: any WorldSnapshot, for world: StoreWorld) {
        resetPoints[world] = snapshot
        pendingPoints.remove(world)
    }

    /// These worlds' reset points are what they hold now, to be taken when first needed.
    func setPendingPoints(_ worlds: [StoreWorld]) {
        for world in worlds {
            resetPoints[world] = nil
            pendingPoints.insert(world)
        }
    }

    func isPending(_ world: StoreWorld) -> Bool { pendingPoints.contains(world) }
    func setUsers(_ list: [FixtureUser], in world: StoreWorld) { users[world] = list }

    /// Keeps `snapshots` under `name`, within `limits`, beside the worlds kept under it before (a world kept
    /// again is replaced).
    /// - Throws: `QUOTA_EXCEEDED` naming the limit, with nothing kept.
    func save(_ snapshots: [StoreWorld: any WorldSnapshot], named name: String, within limits: SnapshotLimits) throws {
        if named[name] == nil, named.count >= limits.count {
            throw ShareError(
                .quotaExceeded,
                "serve keeps at most \(limits.count) named snapshots, and has \(named.count): delete one with DELETE "
                    + "/_sharelane/snapshots/NAME, or take \(name) under the name of one to replace it",
                subject: name)
        }
        // Worlds already kept under this name are replaced (each test worker may keep its own container
        // under a name the others use too); the rest stay.
        let kept = named.values.reduce(0) { total, worlds in worlds.values.reduce(total) { $0 + $1.byteCount } }
        let replaced = snapshots.keys.reduce(0) { $0 + (named[name]?[$1]?.byteCount ?? 0) }
        let others = kept - replaced
        let size = snapshots.values.reduce(0) { $0 + $1.byteCount }
        if others + size > limits.bytes {
            throw ShareError(
                .quotaExceeded,
                "the snapshot \(name) holds \(SnapshotLimits.text(size)), and with the others serve keeps "
                    + "(\(SnapshotLimits.text(others))) it would be over the limit of \(SnapshotLimits.text(limits.bytes)) "
                    + "for named snapshots together: delete one with DELETE /_sharelane/snapshots/NAME, or take fewer "
                    + "worlds (give container and environment)",
                subject: name)
        }
        named[name, default: [:]].merge(snapshots) { $1 }
    }

    /// Forgets a named snapshot; false when there is none of that name.
    func delete(named name: String) -> Bool { named.removeValue(forKey: name) != nil }

    /// Forgets everything kept of `world`, its copies in named snapshots too (a snapshot left with no world
    /// goes), so that nothing holds on to a world removed; false when nothing was kept of it.
    func forget(_ world: StoreWorld) -> Bool {
        var held = resetPoints.removeValue(forKey: world) != nil
        held = pendingPoints.remove(world) != nil || held
        held = users.removeValue(forKey: world) != nil || held
        for name in named.keys where named[name]?.removeValue(forKey: world) != nil {
            held = true
            if named[name]?.isEmpty == true { named[name] = nil }
        }
        return held
    }
}
