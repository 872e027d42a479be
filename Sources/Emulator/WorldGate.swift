import ShareKit

/// Keeps a world's requests and its resets apart: requests of a world run together, a reset or restore of
/// it waits for those under way and holds back new ones until it is done, so that each request sees the
/// world before the reset or after it, never half of one and half of the other.
actor WorldGate {
    private var running: [StoreWorld: Int] = [:]
    private var closed: Set<StoreWorld> = []
    /// Resets waiting to start: new requests wait behind them, so that a busy world still gets reset.
    private var closing: [StoreWorld: Int] = [:]
    /// Requests waiting for a reset to end, and resets waiting for requests (or another reset) to end.
    private var waitingToEnter: [StoreWorld: [CheckedContinuation<Void, Never>]] = [:]
    private var waitingToClose: [StoreWorld: [CheckedContinuation<Void, Never>]] = [:]

    /// Runs one request of `world`.
    func request<T: Sendable>(_ world: StoreWorld, _ body: @Sendable () async throws -> T) async throws -> T {
        await enter(world)
        defer { leave(world) }
        return try await body()
    }

    /// Runs `body` with `world` to itself.
    func exclusively<T: Sendable>(_ world: StoreWorld, _ body: @Sendable () async throws -> T) async throws -> T {
        await close(world)
        defer { open(world) }
        return try await body()
    }

    private func enter(_ world: StoreWorld) async {
        while closed.contains(world) || closing[world, default: 0] > 0 {
            await withCheckedContinuation { waitingToEnter[world, default: []].append($0) }
        }
        running[world, default: 0] += 1
    }

    private func leave(_ world: StoreWorld) {
        running[world, default: 1] -= 1
        if running[world] == 0 {
            running[world] = nil
            wakeClosers(world)
        }
    }

    private func close(_ world: StoreWorld) async {
        closing[world, default: 0] += 1
        while closed.contains(world) || running[world, default: 0] > 0 {
            await withCheckedContinuation { waitingToClose[world, default: []].append($0) }
        }
        closing[world, default: 1] -= 1
        if closing[world] == 0 { closing[world] = nil }
        closed.insert(world)
    }

    private func open(_ world: StoreWorld) {
        closed.remove(world)
        for waiter in waitingToEnter.removeValue(forKey: world) ?? [] { waiter.resume() }
        wakeClosers(world)
    }

    private func wakeClosers(_ world: StoreWorld) {
        for waiter in waitingToClose.removeValue(forKey: world) ?? [] { waiter.resume() }
    }
}
