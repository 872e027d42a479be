import ShareKit

/// How many values of each type a record type's field has, and where the first few are: a field whose values
/// disagree is reported once, naming the fewer values, rather than once for every record of the many.
struct FieldTallies {
    struct Tally {
        var count = 0
        /// The first few places, in recipe order, each once: the records of one `repeat:` share its place.
        var places: [SourceLocation] = []
        /// How many of the values are at `places`.
        var placed = 0
        var firstRecord = ""
    }

    /// By `Type.field`, then by the values' type, with the order in which types were first seen.
    private(set) var tallies: [String: [FieldType: Tally]] = [:]
    private(set) var order: [String: [FieldType]] = [:]

    mutating func count(_ key: String, _ type: FieldType, _ record: DeclaredRecord) {
        var tally = tallies[key]?[type] ?? Tally()
        if tally.count == 0 {
            order[key, default: []].append(type)
            tally.firstRecord = record.name
        }
        tally.count += 1
        if tally.places.contains(record.location) {
            tally.placed += 1
        } else if tally.places.count < 3 {
            tally.places.append(record.location)
            tally.placed += 1
        }
        tallies[key, default: [:]][type] = tally
    }

    /// `1 STRING value at 38:11`, `3 STRING values at 12:5, 14:5 and 20:5`, `203 INT64 values`.
    static func values(_ tally: Tally, _ type: FieldType, places: Bool) -> String {
        let noun = "\(tally.count) \(type.rawValue) value\(tally.count == 1 ? "" : "s")"
        guard places else { return noun }
        var shown = tally.places.map { "\($0.line):\($0.column)" }
        if tally.count > tally.placed { shown.append("\(tally.count - tally.placed) more") }
        let list =
            shown.count > 1 ? shown.dropLast().joined(separator: ", ") + " and " + shown[shown.count - 1] : shown[0]
        return noun + " at " + list
    }
}

extension SchemaInference {
    /// One error per field whose values disagree, at the first of the fewer values: `field qty of Item: 1
    /// STRING value at 38:11 against 203 INT64 values`. A field the schema declares takes its declared type;
    /// any other the type most of its values have, which the schema then holds.
    mutating func reportConflicts(
        _ keys: Set<String>, in recipe: Recipe, schema result: inout RecipeSchema, declared: Schema
    ) {
        var tallies = FieldTallies()
        func count(_ record: DeclaredRecord) {
            guard !record.absent, !record.type.isEmpty else { return }
            for (name, value) in record.fields where keys.contains("\(record.type).\(name)") {
                let type: FieldType =
                    switch value {
                    case .value(let v): v.type
                    case .shareURL: .string
                    }
                tallies.count("\(record.type).\(name)", type, record)
            }
        }
        for zone in recipe.zones { zone.records.forEach(count) }
        recipe.publicRecords.forEach(count)
        for key in keys.sorted() {
            guard let byType = tallies.tallies[key], let order = tallies.order[key],
                let dot = key.firstIndex(of: ".")
            else { continue }
            let recordType = String(key[..<dot])
            let name = String(key[key.index(after: dot)...])
            let declaredField = declared.field(name, of: recordType)
            let winner: FieldType
            if let declaredField {
                winner = declaredField.type
            } else {
                // Most values win; on a tie, the first written.
                var best = order[0]
                for type in order where (byType[type]?.count ?? 0) > (byType[best]?.count ?? 0) { best = type }
                winner = best
            }
            if declaredField == nil, let first = byType[winner]?.places.first {
                result.schema.recordTypes[recordType]?.fields[name] = SchemaField(
                    name, winner, indexes: SchemaRules.defaultIndexes(for: winner))
                result.locations[key] = first
            }
            let majority = byType[winner] ?? FieldTallies.Tally()
            for type in order where type != winner {
                guard let minority = byType[type], let place = minority.places.first else { continue }
                let against =
                    declaredField.map { field in
                        ", but the schema declares \(key) \(field.typeName)"
                            + (result.locations[key].map { " (\($0))" } ?? "")
                    } ?? " against \(FieldTallies.values(majority, winner, places: false))"
                errors.append(
                    RecipeError(
                        "field `\(name)` of `\(recordType)`: \(FieldTallies.values(minority, type, places: true)) "
                            + "(record `\(minority.firstRecord)`\(minority.count > 1 ? " and others" : ""))\(against); "
                            + "a field keeps one type in CloudKit: write \(minority.count == 1 ? "it" : "them") as "
                            + "\(winner.rawValue)\(Self.typeHint(winner))", at: place))
            }
        }
    }

    /// A warning for a field whose type a few values chose for all: `qty: 1.5` on one record makes every
    /// `qty` a DOUBLE, the whole numbers of the others too.
    mutating func warnSettled(_ tallies: FieldTallies, settled: [String: Int], declared: Schema) {
        for key in tallies.tallies.keys.sorted() {
            guard let byType = tallies.tallies[key], let dot = key.firstIndex(of: "."), let whole = settled[key]
            else { continue }
            let recordType = String(key[..<dot])
            let name = String(key[key.index(after: dot)...])
            guard declared.field(name, of: recordType) == nil else { continue }
            for (type, deciding) in byType where deciding.count < whole {
                guard let place = deciding.places.first else { continue }
                var warning = RecipeError(
                    "field `\(name)` of `\(recordType)` is \(type.rawValue) for all "
                        + "\(whole + deciding.count) values because of "
                        + "\(FieldTallies.values(deciding, type, places: true)); the \(whole) whole numbers "
                        + "become \(type.rawValue) too. If \(name) is a whole number, write "
                        + "\(deciding.count == 1 ? "that value" : "those values") as one; if not, declare "
                        + "`\(name): \(type.rawValue)` under `schema: \(recordType):` to say so", at: place)
                warning.isWarning = true
                warnings.append(warning)
            }
        }
    }
}
