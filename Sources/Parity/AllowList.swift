import Foundation

/// The differences a project knows to be deliberate (a documented emulator limit), each with its reason:
/// an `--allow` file of `PATH: REASON` lines, `#` starting a comment. `[*]` in a path stands for any index.
public struct AllowList: Sendable {
    struct Entry: Sendable {
        var pattern: String
        var reason: String
    }

    private var entries: [Entry] = []

    public init() {}

    /// Reads an allow file's text.
    /// - Throws: `ParityError.badAllowLine` at the first line that is not `PATH: REASON`.
    public init(text: String, file: String) throws {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let colon = trimmed.range(of: ": ") else {
                throw ParityError.badAllowLine(file: file, line: index + 1, text: trimmed)
            }
            let path = trimmed[..<colon.lowerBound].trimmingCharacters(in: .whitespaces)
            let reason = trimmed[colon.upperBound...].trimmingCharacters(in: .whitespaces)
            guard !path.isEmpty, !reason.isEmpty, !path.contains(" ") else {
                throw ParityError.badAllowLine(file: file, line: index + 1, text: trimmed)
            }
            entries.append(Entry(pattern: path, reason: reason))
        }
    }

    /// The reason a difference at `path` is deliberate, or nil.
    public func reason(for path: String) -> String? {
        entries.first { Self.matches($0.pattern, path) }?.reason
    }

    static func matches(_ pattern: String, _ path: String) -> Bool {
        guard pattern.contains("[*]") else { return pattern == path }
        let parts = pattern.components(separatedBy: "[*]")
        var rest = path[...]
        for (index, part) in parts.enumerated() {
            guard rest.hasPrefix(part) else { return false }
            rest = rest.dropFirst(part.count)
            if index < parts.count - 1 {
                guard rest.first == "[", let close = rest.firstIndex(of: "]"),
                    rest[rest.index(after: rest.startIndex)..<close].allSatisfy(\.isNumber)
                else { return false }
                rest = rest[rest.index(after: close)...]
            }
        }
        return rest.isEmpty
    }

    func marking(_ exchange: ReplayReport.Exchange) -> ReplayReport.Exchange {
        var exchange = exchange
        for index in exchange.differences.indices {
            exchange.differences[index].allowed = reason(for: exchange.differences[index].path)
        }
        return exchange
    }
}
