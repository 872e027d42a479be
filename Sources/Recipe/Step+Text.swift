import ShareKit

// Every piece of text a step holds, rewritten by one function: the lane runner puts the values a lane hands
// on (`${NAME}`, `${share_url:ZONE}`, `${record_name:HANDLE}`) into all of them the same way, whatever the
// action. A new action or field added here without its text is a compile error, not a value left unfilled.
extension Step {
    /// This step with `rewrite` applied to every text it holds: names of zones, records, types and fields,
    /// field values (text, lists of text, references), expected values, query filters, commands, parameters.
    /// Flags, numbers, dates and user handles (`as:`) are not text a value is put into.
    /// - Throws: what `rewrite` throws.
    public func rewritingText(_ rewrite: (String) async throws -> String) async throws -> Step {
        var step = self
        func optional(_ text: String?) async throws -> String? {
            guard let text else { return nil }
            return try await rewrite(text)
        }
        func list(_ texts: [String]) async throws -> [String] {
            var result: [String] = []
            for text in texts { result.append(try await rewrite(text)) }
            return result
        }
        func dictionary(_ texts: [String: String]) async throws -> [String: String] {
            var result: [String: String] = [:]
            for (key, text) in texts { result[key] = try await rewrite(text) }
            return result
        }
        switch action {
        case .plan, .apply, .reset, .deploySchema:
            break
        case .accept(let zone, let record):
            step.action = .accept(zone: try await rewrite(zone), record: try await optional(record))
        case .acceptURL(let url):
            step.action = .acceptURL(try await rewrite(url))
        case .leave(let zone, let record):
            step.action = .leave(zone: try await rewrite(zone), record: try await optional(record))
        case .removeParticipant(let zone, let record, let participant):
            step.action = .removeParticipant(
                zone: try await rewrite(zone), record: try await optional(record), participant: participant)
        case .changePermission(let zone, let record, let participant, let permission):
            step.action = .changePermission(
                zone: try await rewrite(zone), record: try await optional(record), participant: participant,
                to: permission)
        case .save(let zone, let record, let type, let parent, let fields):
            var rewritten: [String: DeclaredValue] = [:]
            for (name, declared) in fields {
                switch declared {
                case .value(let value): rewritten[name] = .value(try await Self.rewriting(value, rewrite))
                case .shareURL(let zone, let record):
                    rewritten[name] = .shareURL(zone: try await rewrite(zone), record: try await optional(record))
                }
            }
            step.action = .save(
                zone: try await rewrite(zone), record: try await rewrite(record), type: try await rewrite(type),
                parent: try await optional(parent), fields: rewritten)
        case .delete(let zone, let record):
            step.action = .delete(zone: try await rewrite(zone), record: try await rewrite(record))
        case .expect(let expectation):
            switch expectation {
            case .access(let can, let zone, let record, let toBe):
                step.action = .expect(
                    .access(can: can, zone: try await rewrite(zone), record: try await optional(record), toBe: toBe))
            case .records(let zone, let count):
                step.action = .expect(.records(zone: try await rewrite(zone), count: count))
            case .field(let zone, let record, let name, let equals):
                step.action = .expect(
                    .field(
                        zone: try await rewrite(zone), record: try await rewrite(record), name: try await rewrite(name),
                        equals: try await Self.rewriting(equals, rewrite)))
            case .notified(let subscription, let toBe):
                step.action = .expect(.notified(subscription: try await rewrite(subscription), toBe: toBe))
            }
        case .export(let out, let zones):
            step.action = .export(out: try await optional(out), zones: try await list(zones))
        case .lane(let name, let parameters):
            step.action = .lane(name: try await rewrite(name), parameters: try await dictionary(parameters))
        case .query(var query):
            query.zone = try await rewrite(query.zone)
            query.query.recordType = try await rewrite(query.query.recordType)
            for index in query.query.filters.indices {
                query.query.filters[index].value = try await Self.rewriting(query.query.filters[index].value, rewrite)
            }
            if case .names(let names) = query.expect { query.expect = .names(try await list(names)) }
            step.action = .query(query)
        case .subscribe(var subscribe):
            subscribe.subscriptionID = try await rewrite(subscribe.subscriptionID)
            subscribe.zone = try await optional(subscribe.zone)
            subscribe.recordType = try await optional(subscribe.recordType)
            subscribe.alertBody = try await optional(subscribe.alertBody)
            step.action = .subscribe(subscribe)
        case .sh(var shell):
            switch shell.command {
            case .shell(let line): shell.command = .shell(try await rewrite(line))
            case .arguments(let words): shell.command = .arguments(try await list(words))
            }
            shell.directory = try await optional(shell.directory)
            shell.environment = try await dictionary(shell.environment)
            step.action = .sh(shell)
        case .outside(var outside):
            outside.parameters = try await Self.rewriting(outside.parameters, rewrite)
            step.action = .outside(outside)
        }
        return step
    }

    private static func rewriting(_ value: FieldValue, _ rewrite: (String) async throws -> String) async throws
        -> FieldValue
    {
        switch value {
        case .string(let text): return .string(try await rewrite(text))
        case .reference(var reference):
            reference.recordName = try await rewrite(reference.recordName)
            return .reference(reference)
        case .list(let type, let values):
            var rewritten: [FieldValue] = []
            for element in values { rewritten.append(try await rewriting(element, rewrite)) }
            return .list(elementType: type, rewritten)
        default: return value
        }
    }

    private static func rewriting(_ value: ActionValue, _ rewrite: (String) async throws -> String) async throws
        -> ActionValue
    {
        switch value {
        case .string(let text): return .string(try await rewrite(text))
        case .list(let items):
            var rewritten: [ActionValue] = []
            for item in items { rewritten.append(try await rewriting(item, rewrite)) }
            return .list(rewritten)
        case .object(let members):
            var rewritten: [String: ActionValue] = [:]
            for (key, member) in members { rewritten[key] = try await rewriting(member, rewrite) }
            return .object(rewritten)
        default: return value
        }
    }
}
