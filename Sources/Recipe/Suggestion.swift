/// "Did you mean" hints: the closest known word by edit distance.
///
/// Deterministic: candidates at the same distance are decided by name, so the same typo gets the same hint
/// whatever order the candidates come in (a dictionary's keys, say).
public enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be a likely misspelling.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        // Comparing with every name of a huge generated zone, once per error, would be quadratic.
        guard candidates.count <= 5_000 else { return nil }
        let limit = max(1, min(3, word.count / 3 + 1))
        var best: (String, Int)? = nil
        for candidate in candidates {
            let d = distance(word.lowercased(), candidate.lowercased())
            guard d <= limit else { continue }
            if let (name, distance) = best, distance < d || (distance == d && name <= candidate) { continue }
            best = (candidate, d)
        }
        return best?.0
    }

    /// Levenshtein distance, with adjacent swaps costing one (Damerau, optimal string alignment).
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        if abs(a.count - b.count) > 3 { return abs(a.count - b.count) }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }

    /// `; did you mean `x`?` or an empty string.
    public static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean `\($0)`?" } ?? ""
    }
}
