/// A store that is one world of a local store (`StoreWorlds`): it says which container and environment it is,
/// and names every user it holds.
///
/// The embedded store (`sqlite:`, `memory:`) is one. The command line asks for it where only a local store
/// can answer: listing a store's users without a recipe, choosing the owner of an export, naming the other
/// worlds of a file.
public protocol LocalWorldStore: Store, UserListing {
    /// The container and environment this store is.
    var world: StoreWorld { get }
}
