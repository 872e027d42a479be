/// What goes wrong reading or writing a recording, each case naming the file or folder at fault and what to do.
public enum ParityError: Error, Sendable, Equatable {
    /// A case file that is not one: where, and why.
    case damaged(file: String, line: Int?, column: Int?, reason: String)
    /// A folder that holds no recording.
    case notARecording(folder: String, reason: String)
    /// A recording's folder that already holds one.
    case notEmpty(folder: String, count: Int)
    /// An `--allow` file's line that is not `path: reason`.
    case badAllowLine(file: String, line: Int, text: String)
    /// The table of the reference's dictionaries (Docs/Reference/Dictionaries.json) that cannot be read.
    case badTable(file: String, reason: String)
}

// MARK: - CustomStringConvertible

extension ParityError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .damaged(let file, let line, let column, let reason):
            let place = [file, line.map(String.init), column.map(String.init)].compactMap { $0 }.joined(separator: ":")
            return "\(place): error: \(reason); this is not a case file as sharelane record writes them: fix it, or "
                + "record it again"
        case .notARecording(let folder, let reason):
            return "\(folder) is not a recording: \(reason); make one with sharelane record --out \(folder)"
        case .notEmpty(let folder, let count):
            return "\(folder) already holds a recording (\(count) case file\(count == 1 ? "" : "s")): give a new or "
                + "empty folder, or move that one away"
        case .badAllowLine(let file, let line, let text):
            return "\(file):\(line):1: error: \"\(text)\" is not PATH: REASON, such as "
                + "\"records[*].fields.photo.value.downloadURL: serve's URLs are its own\""
        case .badTable(let file, let reason):
            return "\(file): error: \(reason); the conformance checks read the table of the reference's "
                + "dictionaries from it: restore it from sharelane's source (Docs/Reference/Dictionaries.json)"
        }
    }
}
