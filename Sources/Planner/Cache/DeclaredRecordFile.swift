import Foundation
import PlanModel
import Recipe

/// The declared records of one zone, kept beside a plan's cache file so that a plan of an unchanged recipe
/// can take the records of the zones it reads without loading the recipe: one line a record, its name, a
/// tab, then the record in a compact form of tab-separated parts (`C`) or, for the rare record the compact
/// form cannot hold, as JSON (`J`). The file is named by the digest of the zone's declaration (`PlanMemo.contents(of:)`), which covers every record,
/// so a file never holds records of another declaration.
///
/// A plan that reads a few changed records of a zone decodes only those lines.
struct DeclaredRecordFile {
    let url: URL

    /// The version of the lines' format, in the file's name: a file of another version is never read, and is
    /// removed with the cache's other leftovers (`removeAll`).
    static let formatVersion = 1

    init(directory: URL, digest: String) {
        url = directory.appendingPathComponent(Self.fileName(digest: digest))
    }

    static func fileName(digest: String) -> String { "\(digest).v\(formatVersion).jsonl" }

    var exists: Bool { FileManager.default.fileExists(atPath: url.path) }

    /// Writes `records` (replacing the file whole); a file that cannot be written only costs a later plan a
    /// load of the recipe. A record name with a tab or newline cannot be written: there is then no file.
    static func write(_ records: [DeclaredRecord], directory: URL, digest: String) {
        let file = DeclaredRecordFile(directory: directory, digest: digest)
        guard !file.exists else { return }
        let encoder = JSONEncoder()
        var text = ""
        text.reserveCapacity(records.count * 120)
        for record in records {
            guard !record.name.breaksTabbedLines else { return }
            text += record.name
            let lineStart = text.utf8.count
            text += "\tC\t"
            if !appendCompactLine(record, to: &text) {
                text.removeSubrange(text.utf8.index(text.startIndex, offsetBy: lineStart)...)
                guard let json = try? encoder.encode(record) else { return }
                text += "\tJ\t"
                text += String(decoding: json, as: UTF8.self)
            }
            text += "\n"
        }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        CacheFileWriting.replace(file.url, with: Data(text.utf8))
    }

    /// Writes `records` (`write`) in the background, while the plan goes on; the plan awaits the task before it
    /// writes the cache file that names the file.
    static func startWriting(_ records: [DeclaredRecord], directory: URL, digest: String) -> Task<Void, Never> {
        Task.detached(priority: .utility) { write(records, directory: directory, digest: digest) }
    }

    /// The records named (every record when `names` is nil), in the recipe's order; nil when the file is
    /// missing or damaged. Lines of other records are skipped by their name alone.
    func records(named names: Set<String>? = nil) -> [DeclaredRecord]? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        let decoder = JSONDecoder()
        var records: [DeclaredRecord] = []
        var damaged = false
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var start = 0
            while start < bytes.count, !damaged {
                var end = start
                while end < bytes.count && bytes[end] != 0x0A { end += 1 }
                defer { start = end + 1 }
                // name, tab, kind, tab, the rest
                var tab = start
                while tab < end && bytes[tab] != 0x09 { tab += 1 }
                guard tab + 3 <= end, bytes[tab + 2] == 0x09 else {
                    damaged = true
                    return
                }
                let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<tab]), as: UTF8.self)
                guard names?.contains(name) ?? true else { continue }
                let rest = UnsafeRawBufferPointer(rebasing: bytes[(tab + 3)..<end])
                let record: DeclaredRecord?
                switch bytes[tab + 1] {
                case UInt8(ascii: "C"):
                    record = Self.record(named: name, compact: rest)
                case UInt8(ascii: "J"): record = try? decoder.decode(DeclaredRecord.self, from: Data(rest))
                default: record = nil
                }
                guard let record else {
                    damaged = true
                    return
                }
                records.append(record)
            }
        }
        return damaged ? nil : records
    }

    // MARK: - The compact line

    /// The common record (no share, every field a string, an integer or a double) as tab-separated parts:
    /// type, parent, absent, the location's file, line and column, then each field's name, kind and value;
    /// nil for any other record (written as JSON). Tabs, newlines and backslashes in text are escaped.
    /// Appends the record's compact form to `text`, its parts written in place rather than joined; false, with
    /// part of it appended, for a record the form cannot hold.
    private static func appendCompactLine(_ record: DeclaredRecord, to text: inout String) -> Bool {
        guard record.share == nil else { return false }
        text += escape(record.type)
        text += "\t"
        if let parent = record.parent {
            text += "+"
            text += escape(parent)
        } else {
            text += "-"
        }
        text += record.absent ? "\t1\t" : "\t0\t"
        text += escape(record.location.file)
        text += "\t"
        text += String(record.location.line)
        text += "\t"
        text += String(record.location.column)
        for key in record.fields.keys.sorted() {
            text += "\t"
            text += escape(key)
            switch record.fields[key] {
            case .value(.string(let value))?:
                text += "\ts\t"
                text += escape(value)
            case .value(.int64(let number))?:
                text += "\ti\t"
                text += String(number)
            case .value(.double(let number))? where number.isFinite:
                text += "\td\t"
                text += String(number.bitPattern, radix: 16)
            default: return false
            }
        }
        return true
    }

    /// The record of a compact line's bytes after its name and kind (`appendCompactLine`); nil when they are
    /// not one. Read as bytes, not split as a `String`: an apply after a plan of a new store reads every
    /// record of the recipe from these files.
    private static func record(named name: String, compact bytes: UnsafeRawBufferPointer) -> DeclaredRecord? {
        var parts: [Range<Int>] = []
        parts.reserveCapacity(18)
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\t") {
            parts.append(start..<index)
            start = index + 1
        }
        parts.append(start..<bytes.count)
        func text(_ part: Int) -> String { unescape(UnsafeRawBufferPointer(rebasing: bytes[parts[part]])) }
        /// Whether the part is exactly this one character.
        func isCharacter(_ part: Int, _ character: Unicode.Scalar) -> Bool {
            parts[part].count == 1 && bytes[parts[part].lowerBound] == UInt8(ascii: character)
        }
        guard parts.count >= 6, (parts.count - 6) % 3 == 0, let line = Int(text(4)), let column = Int(text(5))
        else { return nil }
        let parent: String?
        switch parts[1].isEmpty ? nil : bytes[parts[1].lowerBound] {
        case UInt8(ascii: "+"): parent = unescape(UnsafeRawBufferPointer(rebasing: bytes[parts[1].dropFirst()]))
        case UInt8(ascii: "-"): parent = nil
        default: return nil
        }
        var fields: [String: DeclaredValue] = [:]
        fields.reserveCapacity((parts.count - 6) / 3)
        var index = 6
        while index < parts.count {
            let key = text(index)
            if isCharacter(index + 1, "s") {
                fields[key] = .value(.string(text(index + 2)))
            } else if isCharacter(index + 1, "i") {
                guard let number = Int64(text(index + 2)) else { return nil }
                fields[key] = .value(.int64(number))
            } else if isCharacter(index + 1, "d") {
                guard let bits = UInt64(text(index + 2), radix: 16) else { return nil }
                fields[key] = .value(.double(Double(bitPattern: bits)))
            } else {
                return nil
            }
            index += 3
        }
        return DeclaredRecord(
            name: name, type: text(0), fields: fields, parent: parent, share: nil, absent: isCharacter(2, "1"),
            location: SourceLocation(file: text(3), line: line, column: column))
    }

    private static func escape(_ text: String) -> String {
        // Scalar by scalar: "\r\n" is one Character.
        guard text.unicodeScalars.contains(where: { $0 == "\t" || $0 == "\n" || $0 == "\\" || $0 == "\r" }) else {
            return text
        }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": escaped.append(contentsOf: "\\t".unicodeScalars)
            case "\n": escaped.append(contentsOf: "\\n".unicodeScalars)
            case "\r": escaped.append(contentsOf: "\\r".unicodeScalars)
            case "\\": escaped.append(contentsOf: "\\\\".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// The text of escaped UTF-8 bytes (`escape`). Byte by byte: every escape is ASCII, and no byte of a
    /// longer UTF-8 sequence is.
    private static func unescape(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.contains(UInt8(ascii: "\\")) else { return String(decoding: bytes, as: UTF8.self) }
        var plain: [UInt8] = []
        plain.reserveCapacity(bytes.count)
        var escaping = false
        for byte in bytes {
            if escaping {
                switch byte {
                case UInt8(ascii: "t"): plain.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "n"): plain.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "r"): plain.append(UInt8(ascii: "\r"))
                default: plain.append(byte)
                }
                escaping = false
            } else if byte == UInt8(ascii: "\\") {
                escaping = true
            } else {
                plain.append(byte)
            }
        }
        return String(decoding: plain, as: UTF8.self)
    }

    /// Removes the files in `directory` that no digest in `kept` names.
    static func removeAll(in directory: URL, except kept: Set<String>) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let keptNames = Set(kept.map(fileName(digest:)))
        // Files of other declarations or of another format version, and what a write that was stopped left
        // (`CacheFileWriting`).
        for name in names where (name.hasSuffix(".jsonl") && !keptNames.contains(name)) || name.hasSuffix(".partial") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
}
