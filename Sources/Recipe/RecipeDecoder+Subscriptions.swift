import ShareKit

extension RecipeDecoder {
    /// The keys of an entry of `subscriptions:`: a lane `subscribe` step's.
    static let subscriptionKeys = [
        "as", "id", "database", "type", "zone", "record_type", "fires_on", "fires_once", "alert",
    ]

    /// `subscriptions: [{ as, id, database, type, zone?, record_type?, fires_on?, fires_once?, alert? }]`,
    /// checked against the recipe's users and zones: a known user, a zone the recipe declares in the
    /// owner's private database, one ID per user and database, a kind the database takes.
    func decodeSubscriptions(_ node: RecipeNode, users: [DeclaredUser], owner: String, zones: [DeclaredZone])
        -> [DeclaredSubscription]
    {
        if case .scalar(let s, true) = node.content, ScalarResolver.isNull(s) { return [] }
        guard let items = node.items else {
            error(
                "`subscriptions` must be a list, such as `- { as: alice, id: private-changes, database: private, "
                    + "type: database }`", node.location)
            return []
        }
        var declared: [DeclaredSubscription] = []
        var seen: [String: SourceLocation] = [:]
        // Query subscriptions by user, database, record type and fires_on set (`Subscription.queryTwinKey`).
        var watching: [String: (String, SourceLocation)] = [:]
        for item in items {
            guard let fields = pairs(item, "a subscription") else { continue }
            checkKeys(fields, allowed: Self.subscriptionKeys, in: "a subscription")
            let before = errors.count
            var handle = owner
            if let node = item["as"], let given = string(node, "`as`") {
                handle = given
                if !users.contains(where: { $0.handle == given }) && !faultyUserHandles.contains(given) {
                    error(
                        "unknown user `\(given)` in a subscription"
                            + Suggestion.hint(for: given, in: users.map(\.handle))
                            + "; declare them under `users:`", node.location)
                }
            }
            guard let step = decodeSubscribe({ item[$0] }, location: item.location, what: "a subscription"),
                errors.count == before
            else { continue }
            let typeLocation = item["type"]?.location ?? item.location
            if let refusal = step.kind.refusal(in: step.database) {
                error(
                    "subscription `\(step.subscriptionID)`: \(refusal); use `type: \(step.database == .public ? "query" : "database")` "
                        + "or another database", typeLocation)
            }
            if let zone = step.zone, zone != defaultZoneName {
                let zoneLocation = item["zone"]?.location ?? item.location
                let zoneOwner = zones.first { $0.name == zone }.map { $0.owner ?? owner }
                if zoneOwner == nil {
                    error(
                        "subscription `\(step.subscriptionID)` watches zone `\(zone)`, which the recipe does not "
                            + "declare" + Suggestion.hint(for: zone, in: zones.map(\.name))
                            + "; declare it under `zones:`", zoneLocation)
                } else if let zoneOwner, handle != zoneOwner {
                    error(
                        "subscription `\(step.subscriptionID)` of \(handle) watches zone `\(zone)`, which is in "
                            + "\(zoneOwner)'s private database, not \(handle)'s; \(handle) subscribes to the shared "
                            + "database instead (`database: shared, type: database`)", zoneLocation)
                }
            }
            let key = "\(handle)/\(step.database.rawValue)/\(step.subscriptionID)"
            let idLocation = item["id"]?.location ?? item.location
            if let first = seen[key] {
                error(
                    "\(handle) already has a subscription `\(step.subscriptionID)` in the \(step.database.rawValue) "
                        + "database (at \(first)); give each one its own `id:`", idLocation)
                continue
            }
            seen[key] = idLocation
            if let twinKey = Subscription.queryTwinKey(
                kind: step.kind, recordType: step.recordType, firesOn: step.firesOn)
            {
                let watch = "\(handle)/\(step.database.rawValue)/\(twinKey)"
                if let (firstID, firstLocation) = watching[watch] {
                    error(
                        "subscription `\(step.subscriptionID)` of \(handle) watches \(step.recordType ?? "") on "
                            + step.firesOn.map(\.rawValue).sorted().joined(separator: ", ")
                            + " in the \(step.database.rawValue) database, as `\(firstID)` does (at \(firstLocation)); "
                            + "CloudKit keeps one query subscription per record type and fires_on: declare one, or "
                            + "give them different `fires_on`", item["record_type"]?.location ?? item.location)
                    continue
                }
                watching[watch] = (step.subscriptionID, item.location)
            }
            guard errors.count == before else { continue }
            declared.append(DeclaredSubscription(handle: handle, subscribe: step, location: item.location))
        }
        return declared
    }
}
