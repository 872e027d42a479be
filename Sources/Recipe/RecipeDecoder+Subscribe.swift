import ShareKit

extension RecipeDecoder {
    /// `subscribe: { as, id, database, type: database|zone|query, zone?, record_type?, fires_on?, fires_once?,
    /// alert? }`, and each entry of the recipe's `subscriptions:` (`what` names which, for messages).
    func decodeSubscribe(_ value: (String) -> RecipeNode?, location: SourceLocation, what: String = "`subscribe`")
        -> SubscribeStep?
    {
        let before = errors.count
        guard let idNode = value("id") else {
            error("\(what) needs `id:` (the subscription ID)", location)
            return nil
        }
        guard let id = string(idNode, "`id`") else { return nil }
        if id.isEmpty { error("\(what) needs a non-empty `id:`", idNode.location) }
        var database = DatabaseScope.private
        if let node = value("database"), let word = string(node, "`database`") {
            if let scope = DatabaseScope(rawValue: word) {
                database = scope
            } else {
                error("unknown database `\(word)`; use private, shared or public", node.location)
            }
        }
        var kind = Subscription.Kind.database
        if let node = value("type"), let word = string(node, "`type`") {
            if let found = Subscription.Kind(rawValue: word) {
                kind = found
            } else {
                error(
                    "unknown subscription type `\(word)`"
                        + Suggestion.hint(for: word, in: Subscription.Kind.allCases.map(\.rawValue))
                        + "; use database, zone or query", node.location)
            }
        }
        let zone = value("zone").flatMap { string($0, "`zone`") }
        let recordType = value("record_type").flatMap { string($0, "`record_type`") }
        var firesOn = Subscription.Trigger.allCases
        if let node = value("fires_on") {
            let words = node.items.map { $0.compactMap { string($0, "a `fires_on` word") } } ?? []
            firesOn = []
            for word in words {
                if let trigger = Subscription.Trigger(rawValue: word) {
                    firesOn.append(trigger)
                } else {
                    error("unknown `fires_on` word `\(word)`; use create, update or delete", node.location)
                }
            }
            if node.items == nil { error("`fires_on` is a list, such as [create, update]", node.location) }
        }
        switch kind {
        case .zone where zone == nil:
            error("\(what) with `type: zone` needs `zone:` (the zone it watches)", location)
        case .query where recordType == nil:
            error("\(what) with `type: query` needs `record_type:` (the record type it watches)", location)
        default:
            break
        }
        if kind == .query, let node = value("fires_on"), node.items?.isEmpty == true {
            error("`fires_on` needs one or more of create, update, delete", node.location)
        }
        let firesOnce = value("fires_once").flatMap { bool($0, "`fires_once`") } ?? false
        if firesOnce, kind != .query, let node = value("fires_once") {
            // CloudKit's firesOnce is a query subscription's option; the wire carries it for those alone.
            error(
                "`fires_once` is for `type: query` subscriptions only; a \(kind.rawValue) subscription fires on "
                    + "every change until it is deleted", node.location)
        }
        let alertBody = value("alert").flatMap { string($0, "`alert`") }
        guard errors.count == before else { return nil }
        return SubscribeStep(
            subscriptionID: id, database: database, kind: kind, zone: zone, recordType: recordType, firesOn: firesOn,
            firesOnce: firesOnce, alertBody: alertBody)
    }
}
