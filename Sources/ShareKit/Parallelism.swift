/// How many store calls a plan or an apply has under way at once: `--parallelism N` (Terraform's word), 10
/// unless told otherwise. Over `http:` and `cloudkit:` each call is a request, and the store itself never has
/// more than N on the wire (`WebServicesStore`), retries and sign-ins included.
public enum Parallelism {
    /// The bound unless a command says otherwise.
    public static let `default` = 10

    /// The calls to have under way at once against `store` for a bound of `parallelism`: the bound itself for
    /// a store that takes one zone or user a call (each a request), and at most `localLimit` for one that
    /// writes many in one transaction (the embedded store, whose writes go one after another whatever the
    /// number: more calls at once would only hold more in memory).
    public static func calls(_ parallelism: Int, for store: any Store, localLimit: Int) -> Int {
        let bound = max(1, parallelism)
        return store.capabilities.batchesInOneTransaction ? min(bound, localLimit) : bound
    }
}

/// A store whose change-feed reads of several zones, made at the same moment, travel together in one request
/// (Web Services' `changes/zone` takes many zones): a caller reading many zones' changes may have this many
/// times its bound of reads under way, and the store still has no more requests than the bound on the wire.
package protocol ReadsZoneFeedsTogether {
    /// The most zones one request reads.
    var zoneFeedsPerRequest: Int { get }
}
