import Foundation
import ShareKit

/// Where a field value is decoded: its zone, its path (which seeds `fake.*`) and the `repeat:` index.
struct ValueContext {
    var zone: String?
    var path: String
    var index: Int?
    var allowShareURL: Bool
    /// The record's path, for the placeholders that agree within a record (`fake.city`).
    var recordPath: String? = nil
}

extension RecipeDecoder {
    static let knownTags = ["!ref", "!bytes", "!asset", "!share-url"]
    static let referenceKeys = ["ref", "zone", "action"]
    static let locationKeys = [
        "latitude", "longitude", "altitude", "horizontal_accuracy", "vertical_accuracy", "speed", "course", "timestamp",
    ]

    /// A field value in any of the recipe forms (Docs/RecipeFormat.md, "Field values"), or nil after reporting why it is not one.
    func declaredValue(_ node: RecipeNode, _ context: ValueContext) -> DeclaredValue? {
        if node.tag == "!share-url" {
            guard context.allowShareURL else {
                error("`!share-url` is only allowed as a record field value", node.location)
                return nil
            }
            guard let text = string(node, "`!share-url`") else { return nil }
            let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
            guard let zone = parts.first, !zone.isEmpty else {
                error("`!share-url` names a zone, or a zone and a record: `!share-url ZONE[/RECORD]`", node.location)
                return nil
            }
            let record = parts.count > 1 ? parts[1] : nil
            shareURLs.append(
                PendingShareURL(zone: zone, record: record, fromZone: context.zone, location: node.location))
            return .shareURL(zone: zone, record: record)
        }
        return fieldValue(node, context).map { .value($0) }
    }

    /// Notes a field written as `{type: …, value: …}` for the record or step at `place` (`typedFields`).
    func noteTyped(_ field: RecipePair, at place: SourceLocation) {
        guard field.value.tag == nil, let pairs = field.value.pairs, pairs.contains(where: { $0.key == "type" })
        else { return }
        typedFields[place, default: []].insert(field.key)
    }

    /// A plain field value (no `!share-url`).
    func fieldValue(_ node: RecipeNode, _ context: ValueContext) -> FieldValue? {
        if let tag = node.tag {
            return taggedValue(tag, node, context)
        }
        switch node.content {
        case .scalar(let text, let plain):
            return scalarValue(text, plain: plain, node: node, context)
        case .sequence(let items):
            return listValue(items, node: node, context)
        case .mapping(let pairs):
            let keys = Set(pairs.map(\.key))
            if keys.contains("type") || keys.contains("value") {
                return typedValue(node, context)
            }
            if keys.contains("ref") {
                return referenceValue(node, context)
            }
            if keys.contains("latitude") || keys.contains("longitude") {
                return locationValue(node)
            }
            error(
                "a mapping field value is `{type: …, value: …}`, `{ref: …}` or `{latitude: …, longitude: …}`; found keys "
                    + pairs.map { "`\($0.key)`" }.joined(separator: ", "), node.location)
            return nil
        }
    }

    private func scalarValue(_ text: String, plain: Bool, node: RecipeNode, _ context: ValueContext) -> FieldValue? {
        if Template.containsPlaceholder(text) {
            do {
                switch try expandTemplate(
                    text, index: context.index, path: context.path, recordPath: context.recordPath)
                {
                case .text(let s): return .string(s)
                case .int(let i): return .int64(i)
                case .timestamp(let ms): return .timestamp(ms)
                case .location(let latitude, let longitude):
                    return .location(Location(latitude: latitude, longitude: longitude))
                }
            } catch {
                self.error(error.message, error.offset.map(node.location(ofCharacter:)) ?? node.location)
                return nil
            }
        }
        guard plain else { return .string(text) }
        let resolved: ScalarResolver.Resolved
        if let known = resolvedScalars[text] {
            resolved = known
        } else {
            resolved = ScalarResolver.resolve(text)
            resolvedScalars[text] = resolved
        }
        switch resolved {
        case .null:
            error("a field cannot be null; remove the field, or quote the text (`\"null\"`)", node.location)
            return nil
        case .bool(let b): return .int64(b ? 1 : 0)
        case .int(let i): return .int64(i)
        case .intOutOfRange:
            error("`\(text)` does not fit in INT64", node.location)
            return nil
        case .double(let d): return finiteDouble(d, text, node)
        case .timestamp(let ms): return .timestamp(ms)
        case .string(let s): return .string(s)
        }
    }

    private func taggedValue(_ tag: String, _ node: RecipeNode, _ context: ValueContext) -> FieldValue? {
        switch tag {
        case "!ref":
            guard let name = string(node, "`!ref`") else { return nil }
            references.append(
                PendingReference(fromZone: context.zone, zone: nil, recordName: name, location: node.location))
            return .reference(Reference(recordName: name))
        case "!bytes":
            guard let text = string(node, "`!bytes`") else { return nil }
            return bytesValue(text, node)
        case "!asset":
            guard let path = string(node, "`!asset`") else { return nil }
            return assetValue(path, node)
        case "!share-url":
            error("`!share-url` cannot be used here (only as a whole field value)", node.location)
            return nil
        default:
            let known = Self.knownTags.map { "`\($0)`" }.joined(separator: ", ")
            let hint =
                Suggestion.closest(to: tag, in: Self.knownTags).map { "did you mean `\($0)`?" }
                ?? "field values take \(known)"
            error("unknown tag `\(tag)`; \(hint)", node.location)
            return nil
        }
    }

    private func bytesValue(_ text: String, _ node: RecipeNode) -> FieldValue? {
        let compact = text.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: compact) else {
            error("`!bytes` takes base64 text; this is not valid base64", node.location)
            return nil
        }
        return .bytes(data)
    }

    /// `!asset PATH`: the file, relative to the recipe that names it, must exist. The value is
    /// `PATH#fnv1a64:HEX`, PATH relative to the root recipe's directory and HEX a hash of the content, so a
    /// changed file shows as a changed field in the plan.
    private func assetValue(_ path: String, _ node: RecipeNode) -> FieldValue? {
        let declaringDirectory = RecipePath.directory(of: node.location.file)
        let resolved = RecipePath.join(declaringDirectory, path)
        log.read(file: resolved)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), !isDirectory.boolValue else {
            error("asset file `\(path)` does not exist (looked for \(resolved))", node.location)
            return nil
        }
        // Before it is opened: opening a FIFO waits for a writer (`RecipePath.notRegularFile`).
        if let kind = RecipePath.notRegularFile(resolved) {
            error("asset file `\(path)` is \(kind), not a regular file", node.location)
            return nil
        }
        guard let handle = FileHandle(forReadingAtPath: resolved) else {
            error("asset file `\(path)` cannot be read", node.location)
            return nil
        }
        defer { try? handle.close() }
        var hash = FNV1a64()
        var size = 0
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            } catch {
                self.error("asset file `\(path)` cannot be read", node.location)
                return nil
            }
            if chunk.isEmpty { break }
            size += chunk.count
            // Read in chunks: past the limit, the rest of the file is not read.
            if let problem = CloudKitLimits.assetSizeProblem(size) {
                error("asset file `\(path)` \(problem)", node.location)
                return nil
            }
            hash.update(chunk)
        }
        let stored = RecipePath.relative(resolved, to: rootDirectory)
        return .assetID("\(stored)#fnv1a64:\(hash.hex)")
    }

    private func listValue(_ items: [RecipeNode], node: RecipeNode, _ context: ValueContext) -> FieldValue? {
        guard !items.isEmpty else {
            error(
                "an empty list has no type; write `{type: STRING_LIST, value: []}` (or another *_LIST type)",
                node.location)
            return nil
        }
        var values: [FieldValue] = []
        var failed = false
        for (i, item) in items.enumerated() {
            if item.items != nil {
                error("lists cannot hold lists", item.location)
                failed = true
                continue
            }
            var itemContext = context
            itemContext.path += "/\(i)"
            itemContext.allowShareURL = false
            guard let value = fieldValue(item, itemContext) else {
                failed = true
                continue
            }
            values.append(value)
        }
        if failed { return nil }
        var elementType = values[0].type
        if values.contains(where: { $0.type != elementType }) {
            // Whole numbers among decimals read as decimals: `[1, 2.5]` is a DOUBLE_LIST.
            if values.allSatisfy({ $0.type == .int64 || $0.type == .double }) {
                elementType = .double
                values = values.map { if case .int64(let i) = $0 { return .double(Double(i)) } else { return $0 } }
            } else {
                let firstOther = values.firstIndex { $0.type != values[0].type } ?? 0
                error(
                    "a list holds one type; item 1 is \(values[0].type.rawValue) and item \(firstOther + 1) is \(values[firstOther].type.rawValue)",
                    items[firstOther].location)
                return nil
            }
        }
        return .list(elementType: elementType, values)
    }

    private func referenceValue(_ node: RecipeNode, _ context: ValueContext) -> FieldValue? {
        guard let pairs = node.pairs else { return nil }
        checkKeys(pairs, allowed: Self.referenceKeys, in: "a reference")
        guard let nameNode = node["ref"], let name = string(nameNode, "`ref`") else { return nil }
        var reference = Reference(recordName: name)
        var zone: String? = nil
        if let zoneNode = node["zone"], let z = string(zoneNode, "`zone`") {
            zone = z
            reference.zoneID = ZoneID(zoneName: z)
        }
        if let actionNode = node["action"], let word = string(actionNode, "`action`") {
            switch word.lowercased() {
            case "none": reference.action = .none
            case "delete-self", "delete_self": reference.action = .deleteSelf
            case "validate": reference.action = .validate
            default:
                error(
                    "unknown reference action `\(word)`"
                        + Suggestion.hint(for: word, in: ["none", "delete-self", "validate"])
                        + "; use `none`, `delete-self` or `validate`", actionNode.location)
            }
        }
        references.append(
            PendingReference(fromZone: context.zone, zone: zone, recordName: name, location: nameNode.location))
        return .reference(reference)
    }

    /// A `DOUBLE`: CloudKit and JSON hold finite numbers only, so `.nan` and `.inf` are refused (they would
    /// make a plan that is not JSON and that never settles).
    private func finiteDouble(_ d: Double, _ text: String, _ node: RecipeNode) -> FieldValue? {
        guard d.isFinite else {
            error(
                "`\(text)` is not a finite number; CloudKit's DOUBLE holds finite numbers only (no NaN or infinity)",
                node.location)
            return nil
        }
        return .double(d)
    }

    private func locationValue(_ node: RecipeNode) -> FieldValue? {
        guard let pairs = node.pairs else { return nil }
        checkKeys(pairs, allowed: Self.locationKeys, in: "a location")
        func number(_ key: String) -> Double? {
            guard let n = node[key] else { return nil }
            if case .scalar(let s, true) = n.content {
                switch ScalarResolver.resolve(s) {
                case .int(let i): return Double(i)
                case .double(let d) where d.isFinite: return d
                default: break
                }
            }
            error("`\(key)` must be a number, not \(n.kindDescription)", n.location)
            return nil
        }
        guard node["latitude"] != nil, node["longitude"] != nil else {
            error("a location needs both `latitude` and `longitude`", node.location)
            return nil
        }
        guard let latitude = number("latitude"), let longitude = number("longitude") else { return nil }
        if !(-90...90).contains(latitude) {
            error("`latitude` must be between -90 and 90", node["latitude"]?.location ?? node.location)
        }
        if !(-180...180).contains(longitude) {
            error("`longitude` must be between -180 and 180", node["longitude"]?.location ?? node.location)
        }
        var location = Location(latitude: latitude, longitude: longitude)
        location.altitude = number("altitude")
        location.horizontalAccuracy = number("horizontal_accuracy")
        location.verticalAccuracy = number("vertical_accuracy")
        location.speed = number("speed")
        location.course = number("course")
        if let t = node["timestamp"] {
            if case .scalar(let s, true) = t.content {
                switch ScalarResolver.resolve(s) {
                case .timestamp(let ms): location.timestamp = ms
                case .int(let ms): location.timestamp = ms
                default: error("`timestamp` must be a date and time, such as 2024-05-01T09:00:00Z", t.location)
                }
            } else {
                error("`timestamp` must be a date and time, such as 2024-05-01T09:00:00Z", t.location)
            }
        }
        return .location(location)
    }

    /// `{type: DOUBLE, value: 3}`: the value converted to the named CloudKit type.
    private func typedValue(_ node: RecipeNode, _ context: ValueContext) -> FieldValue? {
        guard let pairs = node.pairs else { return nil }
        checkKeys(pairs, allowed: ["type", "value"], in: "a typed value")
        guard let typeNode = node["type"], let valueNode = node["value"] else {
            error("a typed value needs both `type:` and `value:`", node.location)
            return nil
        }
        guard let word = string(typeNode, "`type`") else { return nil }
        guard let type = FieldType(rawValue: word.uppercased()) else {
            error(
                "unknown field type `\(word)`"
                    + Suggestion.hint(for: word.uppercased(), in: FieldType.allCases.map(\.rawValue))
                    + "; use one of " + FieldType.allCases.map(\.rawValue).joined(separator: ", "), typeNode.location)
            return nil
        }
        return coerce(valueNode, to: type, context)
    }

    private func coerce(_ node: RecipeNode, to type: FieldType, _ context: ValueContext) -> FieldValue? {
        if let element = type.elementType {
            guard let items = node.items else {
                error("a \(type.rawValue) value is a list, not \(node.kindDescription)", node.location)
                return nil
            }
            var values: [FieldValue] = []
            for (i, item) in items.enumerated() {
                var itemContext = context
                itemContext.path += "/\(i)"
                guard let v = coerce(item, to: element, itemContext) else { return nil }
                values.append(v)
            }
            return .list(elementType: element, values)
        }
        if node.tag != nil || node.pairs != nil {
            guard let value = fieldValue(node, context) else { return nil }
            if value.type == type { return value }
            error("this value is \(value.type.rawValue), not \(type.rawValue)", node.location)
            return nil
        }
        guard case .scalar(let rawText, let plain) = node.content else {
            error("a \(type.rawValue) value cannot be \(node.kindDescription)", node.location)
            return nil
        }
        var text = rawText
        if Template.containsPlaceholder(rawText) {
            do {
                text = try expandTemplate(
                    rawText, index: context.index, path: context.path, recordPath: context.recordPath
                ).text
            } catch {
                self.error(error.message, error.offset.map(node.location(ofCharacter:)) ?? node.location)
                return nil
            }
        }
        let resolved = ScalarResolver.resolve(text)
        func mismatch() -> FieldValue? {
            error("`\(text)` is not a valid \(type.rawValue) value", node.location)
            return nil
        }
        switch type {
        case .string:
            return .string(text)
        case .int64:
            switch resolved {
            case .int(let i): return .int64(i)
            case .bool(let b) where plain: return .int64(b ? 1 : 0)
            case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return .int64(Int64(d))
            default: return mismatch()
            }
        case .double:
            switch resolved {
            case .int(let i): return .double(Double(i))
            case .double(let d): return finiteDouble(d, text, node)
            default: return mismatch()
            }
        case .timestamp:
            switch resolved {
            case .timestamp(let ms): return .timestamp(ms)
            case .int(let ms): return .timestamp(ms)
            default: return mismatch()
            }
        case .bytes:
            return bytesValue(text, node)
        case .reference:
            references.append(
                PendingReference(fromZone: context.zone, zone: nil, recordName: text, location: node.location))
            return .reference(Reference(recordName: text))
        case .assetID:
            // The stored form, as `export` writes it: the asset as the store holds it, no file read.
            // `!asset PATH` is the form that reads a file.
            return .assetID(text)
        case .location:
            error("a LOCATION value is `{latitude: …, longitude: …}`", node.location)
            return nil
        default:
            return mismatch()
        }
    }
}
