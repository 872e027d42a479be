import Foundation

/// Compares a replayed answer with the recorded one key by key, after normalizing volatile values.
struct AnswerComparison {
    var correspondence: Correspondence
    private(set) var differences: [Difference] = []

    init(correspondence: Correspondence) {
        self.correspondence = correspondence
    }

    mutating func compare(recorded: RecordedExchange.Response, replayed: RecordedExchange.Response) {
        if recorded.status != replayed.status {
            add(
                Difference(
                    path: "status", kind: .status, recorded: "\(recorded.status)", replayed: "\(replayed.status)"))
        }
        switch (recorded.body, replayed.body) {
        case (.json(let left), .json(let right)): compare(left, right, path: "", key: nil)
        case (.none, .none): break
        case (.text(let left), .text(let right)) where correspondence.carried(left) == right: break
        case (.bytes(let left), .bytes(let right)) where left == right: break
        case (let left, let right):
            add(Difference(path: "body", kind: .body, recorded: Self.describe(left), replayed: Self.describe(right)))
        }
    }

    private static func describe(_ body: RecordedExchange.Body) -> String {
        switch body {
        case .none: "no body"
        case .json: "a JSON body"
        case .text(let text): "a text body of \(text.utf8.count) bytes"
        case .bytes(let data): "a body of \(data.count) bytes"
        }
    }

    private mutating func add(_ difference: Difference) {
        var difference = difference
        difference.recorded = difference.recorded.map(correspondence.masked)
        difference.replayed = difference.replayed.map(correspondence.masked)
        differences.append(difference)
    }

    /// A list's element as a difference names it: by its name where it has one.
    private func element(_ value: JSONValue) -> String {
        Self.identity(value).map { "\"\($0)\"" } ?? shown(value)
    }

    private func shown(_ value: JSONValue) -> String {
        let text = value.jsonText()
        return text.count > 100 ? String(text.prefix(97)) + "…" : text
    }

    private static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private mutating func compare(_ recorded: JSONValue, _ replayed: JSONValue, path: String, key: String?) {
        if let key, let kind = VolatileKind.of(key: key) {
            switch (recorded, replayed) {
            case (.string(let left), .string(let right)):
                if kind == .token {
                    // The person's next token: carried to the person's next request, never compared.
                    if left.hasPrefix("<") { correspondence.bindCredential(left, to: right) }
                    return
                }
                guard kind.corresponds else { return }
                if let (name, other) = correspondence.check(kind, recorded: left, replayed: right) {
                    add(Difference(path: path, kind: .correspondence, recorded: name, replayed: other))
                }
                return
            case (.int, .int), (.int, .double), (.double, .int), (.double, .double):
                if !kind.corresponds { return }
            default: break
            }
        }
        switch (recorded, replayed) {
        case (.object(let left), .object(let right)):
            compareObjects(left, right, path: path)
        case (.array(let left), .array(let right)):
            if let aligned = aligned(left, right) {
                compareAligned(left, right, aligned, path: path, key: key)
                return
            }
            for index in 0..<max(left.count, right.count) {
                let inner = "\(path)[\(index)]"
                if index >= right.count {
                    add(Difference(path: inner, kind: .missingKey, recorded: element(left[index])))
                } else if index >= left.count {
                    add(Difference(path: inner, kind: .extraKey, replayed: element(right[index])))
                } else {
                    compare(left[index], right[index], path: inner, key: key)
                }
            }
        case (.string(let left), .string(let right)):
            if left != right, correspondence.carried(left) != right { value(path, key, recorded, replayed) }
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)):
            if Double(a) != b { value(path, key, recorded, replayed) }
        default:
            if !recorded.hasSameType(as: replayed) {
                add(
                    Difference(
                        path: path, kind: .type, recorded: "\(recorded.typeName) (\(shown(recorded)))",
                        replayed: "\(replayed.typeName) (\(shown(replayed)))"))
            } else if recorded != replayed {
                value(path, key, recorded, replayed)
            }
        }
    }

    /// Key by key; a key the recording has and the replay lacks, beside one only the replay has with the same
    /// value, is one renamed key, not two differences.
    private mutating func compareObjects(_ left: [String: JSONValue], _ right: [String: JSONValue], path: String) {
        let missing = left.keys.filter { right[$0] == nil }.sorted()
        var extra = right.keys.filter { left[$0] == nil }.sorted()
        var renamed: [String: String] = [:]
        for name in missing {
            if let other = extra.first(where: { left[name] == right[$0] }) {
                renamed[name] = other
                extra.removeAll { $0 == other }
            }
        }
        for name in Set(left.keys).union(right.keys).sorted() {
            let inner = Self.join(path, name)
            switch (left[name], right[name]) {
            case (let value?, nil):
                if let other = renamed[name] {
                    add(Difference(path: inner, kind: .renamedKey, recorded: name, replayed: other))
                } else {
                    add(Difference(path: inner, kind: .missingKey, recorded: shown(value)))
                }
            case (nil, let value?):
                if extra.contains(name) { add(Difference(path: inner, kind: .extraKey, replayed: shown(value))) }
            case (let a?, let b?): compare(a, b, path: inner, key: name)
            case (nil, nil): break
            }
        }
    }

    /// What names a list's element: a record's name, a zone's, a subscription's.
    private static func identity(_ value: JSONValue) -> String? {
        value["recordName"]?.stringValue ?? value["zoneID"]?["zoneName"]?.stringValue
            ?? value["subscriptionID"]?.stringValue
    }

    /// For lists of named things (records, zones) that hold different names: where each recorded element is
    /// in the replay, so that one record more or less is one difference, not a shifted list.
    private func aligned(_ left: [JSONValue], _ right: [JSONValue]) -> [Int?]? {
        let leftNames = left.map { Self.identity($0).map(correspondence.carried) }
        let rightNames = right.map(Self.identity)
        guard leftNames.allSatisfy({ $0 != nil }), rightNames.allSatisfy({ $0 != nil }),
            Set(leftNames).count == left.count, Set(rightNames).count == right.count,
            Set(leftNames) != Set(rightNames)
        else { return nil }
        return leftNames.map { name in rightNames.firstIndex(of: name) }
    }

    private mutating func compareAligned(
        _ left: [JSONValue], _ right: [JSONValue], _ aligned: [Int?], path: String, key: String?
    ) {
        for (index, partner) in aligned.enumerated() {
            let inner = "\(path)[\(index)]"
            if let partner {
                compare(left[index], right[partner], path: inner, key: key)
            } else {
                add(Difference(path: inner, kind: .missingKey, recorded: element(left[index])))
            }
        }
        let matched = Set(aligned.compactMap { $0 })
        for index in right.indices where !matched.contains(index) {
            add(Difference(path: "\(path)[\(index)]", kind: .extraKey, replayed: element(right[index])))
        }
    }

    private mutating func value(_ path: String, _ key: String?, _ recorded: JSONValue, _ replayed: JSONValue) {
        add(
            Difference(
                path: path, kind: key == "serverErrorCode" ? .serverErrorCode : .value, recorded: shown(recorded),
                replayed: shown(replayed)))
    }
}
