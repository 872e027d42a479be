/// A length of time as Terraform spells it, the one reading of it for the command line and recipes: `0s`,
/// `500ms`, `30s`, `2m`, `1h`, or a combination (`1m30s`); a bare number is seconds.
public enum DurationText {
    /// The length in seconds; nil when `text` is not a length of time.
    public static func seconds(_ text: String) -> Double? {
        let trimmed = String(text.unicodeScalars.filter { $0 != " " && $0 != "\t" }).lowercased()
        if let plain = Double(trimmed) {
            guard plain.isFinite, plain >= 0 else { return nil }
            return plain
        }
        var total = 0.0
        var rest = Substring(trimmed)
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isNumber || $0 == "." }
            guard let number = Double(digits), number.isFinite else { return nil }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            switch unit {
            case "ms": total += number / 1000
            case "s": total += number
            case "m": total += number * 60
            case "h": total += number * 3600
            default: return nil
            }
        }
        return total
    }
}
