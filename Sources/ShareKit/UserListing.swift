/// A store that can name every user it holds.
///
/// CloudKit cannot list a container's users, so the `Store` protocol does not ask it; local stores can, and
/// the console of `sharelane serve` lists them with this where the store conforms (and says so where it
/// does not).
public protocol UserListing: Sendable {
    /// Every user the store knows, in a stable order.
    /// - Throws: `ShareError` when the store cannot be read.
    func allUsers() async throws -> [User]
}
