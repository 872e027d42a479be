import Foundation
import ShareKit

// Records: `records:` and `children:`, generated ones (`repeat:`), their names, types, fields and shares.
extension RecipeDecoder {
    /// Decodes a `records:` or `children:` mapping, flattening children after their parent.
    /// - Parameters:
    ///   - zone: the zone name, nil for the public database.
    ///   - index: the `i` of the nearest enclosing `repeat:`.
    func decodeRecords(
        _ node: RecipeNode, zone: String?, parent: String?, index: Int?, into out: inout [DeclaredRecord]
    ) {
        guard let recordPairs = pairs(node, parent == nil ? "`records`" : "`children`") else { return }
        for pair in recordPairs {
            guard let spec = pairs(pair.value, "record `\(pair.key)`") else { continue }
            if let repeatNode = pair.value["repeat"] {
                guard let count = integer(repeatNode, "`repeat`") else { continue }
                guard count >= 0, count <= Self.maxRepeat else {
                    error("`repeat` must be between 0 and \(Self.maxRepeat)", repeatNode.location)
                    continue
                }
                guard pair.key.contains("{{") else {
                    error(
                        "a record with `repeat:` needs `{{i}}` in its name, such as `\"\(pair.key)-{{i}}\"`",
                        pair.keyLocation)
                    continue
                }
                if count == 0 { continue }
                if count > 1 { generated.append(GeneratedRecords(nameTemplate: pair.key, count: Int(count))) }
                let before = errors.count
                decodeRecord(pair, spec: spec, zone: zone, parent: parent, index: 1, into: &out)
                // One broken template would otherwise be reported once per generated record.
                if errors.count > before || recordCount > recordLimit || count == 1 { continue }
                if let templated = Self.templatedFields(ofSimpleRecord: spec), let first = out.last {
                    repeatRecord(
                        first, pair: pair, templated: templated, zone: zone, indices: 2...Int(count), into: &out)
                    continue
                }
                for i in 2...Int(count) {
                    let before = errors.count
                    decodeRecord(pair, spec: spec, zone: zone, parent: parent, index: i, into: &out)
                    if errors.count > before || recordCount > recordLimit { break }
                }
            } else {
                decodeRecord(pair, spec: spec, zone: zone, parent: parent, index: index, into: &out)
            }
        }
    }

    /// Whether a value under `fields:` reads as a record's own content rather than a field's: nothing (a plain
    /// `null` or empty value), or a mapping that is not a field value's form (`{type:, value:}`, `{ref:}`,
    /// `{latitude:, longitude:}`).
    static func looksLikeRecordContent(_ value: RecipeNode) -> Bool {
        switch value.content {
        case .scalar(let text, let plain): return plain && ScalarResolver.isNull(text)
        case .mapping(let pairs):
            return !pairs.contains { ["value", "ref", "latitude", "longitude"].contains($0.key) }
        case .sequence: return false
        }
    }

    /// The fields whose values hold a placeholder, when a `repeat:` record is simple enough to be copied from
    /// its first expansion: only `type`, `fields`, `absent` and `repeat`, every field a plain text value.
    /// Nil otherwise (children, shares, parents, tags, lists and mappings are decoded for every index).
    static func templatedFields(ofSimpleRecord spec: [RecipePair]) -> [RecipePair]? {
        var templated: [RecipePair] = []
        for pair in spec {
            switch pair.key {
            case "type", "absent", "repeat": continue
            case "fields":
                guard case .mapping(let fields) = pair.value.content else { return nil }
                for field in fields {
                    guard field.value.tag == nil, case .scalar(let text, _) = field.value.content else { return nil }
                    if Template.containsPlaceholder(text) { templated.append(field) }
                }
            default: return nil
            }
        }
        return templated
    }

    /// Records 2, 3, … of a simple `repeat:` record: copies of the first with the name and the templated
    /// fields expanded for each index, exactly as decoding each one would make them.
    private func repeatRecord(
        _ first: DeclaredRecord, pair: RecipePair, templated: [RecipePair], zone: String?, indices: ClosedRange<Int>,
        into out: inout [DeclaredRecord]
    ) {
        let zonePath = zone.map { "zones/\($0)" } ?? "public"
        out.reserveCapacity(out.count + indices.count)
        for index in indices {
            recordCount += 1
            if recordCount == recordLimit + 1 {
                error("the recipe declares more than \(recordLimit) records", pair.keyLocation)
            }
            if recordCount > recordLimit { return }
            let before = errors.count
            guard let name = recordName(pair, zonePath: zonePath, index: index) else { return }
            var record = first
            record.name = name
            for field in templated {
                let context = ValueContext(
                    zone: zone, path: "\(zonePath)/\(name)/\(field.key)", index: index, allowShareURL: true,
                    recordPath: "\(zonePath)/\(name)")
                record.fields[field.key] = declaredValue(field.value, context)
            }
            if errors.count > before { return }
            out.append(record)
        }
    }

    /// The record's name for this index, checked; nil after reporting why it cannot be one.
    private func recordName(_ pair: RecipePair, zonePath: String, index: Int?) -> String? {
        var name = pair.key
        if Template.containsPlaceholder(pair.key) {
            do {
                name = try expandTemplate(pair.key, index: index, path: "\(zonePath)/names/\(pair.key)/\(index ?? 0)")
                    .text
            } catch {
                self.error("record name `\(pair.key)`: \(error.message)", pair.keyLocation)
                return nil
            }
        }
        if let problem = CloudKitLimits.recordNameProblem(name) { error(problem, pair.keyLocation) }
        return name
    }

    private func decodeRecord(
        _ pair: RecipePair, spec: [RecipePair], zone: String?, parent: String?, index: Int?,
        into out: inout [DeclaredRecord]
    ) {
        recordCount += 1
        if recordCount == recordLimit + 1 {
            error("the recipe declares more than \(recordLimit) records", pair.keyLocation)
        }
        if recordCount > recordLimit { return }
        let zonePath = zone.map { "zones/\($0)" } ?? "public"
        guard let name = recordName(pair, zonePath: zonePath, index: index) else { return }
        checkKeys(spec, allowed: Self.recordKeys, in: "record `\(name)`")
        let node = pair.value
        var record = DeclaredRecord(name: name, type: "", parent: parent, location: pair.keyLocation)
        if let absentNode = node["absent"] { record.absent = bool(absentNode, "`absent`") ?? false }
        if let typeNode = node["type"] {
            if let type = string(typeNode, "`type`") {
                if let problem = CloudKitLimits.recordTypeProblem(type), type != shareRecordType {
                    error(problem, typeNode.location)
                } else {
                    record.type = type
                }
            }
        } else if !record.absent,
            // A mistyped `type` (`typ: Stop`) is reported once, at the key, with `did you mean `type``.
            !spec.contains(where: {
                !Self.recordKeys.contains($0.key) && Suggestion.closest(to: $0.key, in: Self.recordKeys) == "type"
            })
        {
            error("record `\(name)` needs a `type:`", pair.keyLocation)
        }
        if let parentNode = node["parent"], let explicit = string(parentNode, "`parent`") {
            if let parent {
                error(
                    "record `\(name)` is nested under `\(parent)` and also names `parent: \(explicit)`; keep one",
                    parentNode.location)
            } else {
                record.parent = explicit
                parentLocations[(zone ?? "") + "\u{0}" + name] = parentNode.location
            }
        }
        if let fieldsNode = node["fields"], let fieldPairs = pairs(fieldsNode, "`fields`") {
            for field in fieldPairs {
                if let problem = CloudKitLimits.fieldNameProblem(field.key) {
                    error(problem, field.keyLocation)
                    continue
                }
                // A key of the record indented under `fields:` (a mapping, or nothing, where a field's value
                // goes): the indentation is the mistake, not the value.
                if Self.recordKeys.contains(field.key), Self.looksLikeRecordContent(field.value),
                    let fieldsKey = keyLocation(node, "fields")
                {
                    error(
                        "`\(field.key)` is a key of the record, not a field: indent it to the column of `fields:` "
                            + "(column \(fieldsKey.column)), not under it", field.keyLocation)
                    continue
                }
                let context = ValueContext(
                    zone: zone, path: "\(zonePath)/\(name)/\(field.key)", index: index, allowShareURL: true,
                    recordPath: "\(zonePath)/\(name)")
                if let value = declaredValue(field.value, context) { record.fields[field.key] = value }
                noteTyped(field, at: record.location)
            }
        }
        if let shareNode = node["share"] {
            if zone == nil {
                error("records of the public database cannot be shared", shareNode.location)
            } else {
                record.share = decodeShare(
                    shareNode, owner: "record `\(name)`", at: keyLocation(node, "share") ?? shareNode.location)
                if zone == defaultZoneName, case .share = record.share {
                    error(
                        "records in `\(defaultZoneName)` cannot be shared; CloudKit shares live in custom zones",
                        shareNode.location)
                }
            }
        }
        out.append(record)
        if let childrenNode = node["children"] {
            decodeRecords(childrenNode, zone: zone, parent: name, index: index, into: &out)
        }
    }
}
