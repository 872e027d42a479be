/// Lets one task at a time through, in arrival order.
///
/// A web auth token is good for one round trip (Apple's reference; `serve --strict-tokens`), so the requests made as one user go one after the
/// other: each waits for the token that the previous response handed out.
actor SerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
    }

    func leave() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Runs `body` alone.
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await enter()
        do {
            let value = try await body()
            leave()
            return value
        } catch {
            leave()
            throw error
        }
    }
}
