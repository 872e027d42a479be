import Foundation

/// What a replay found: for each exchange, the same or its differences. Holds no credential.
public struct ReplayReport: Sendable, Equatable, Codable {
    public struct Exchange: Sendable, Equatable, Codable {
        /// The case file's name.
        public var file: String
        public var method: String
        public var path: String
        public var differences: [Difference]
        /// Why the request was not sent (`ReplayScope`): a refusal no `--allow` file excuses.
        public var refused: String?

        /// Sent, and the same, or differing only where an `--allow` file says it is deliberate.
        public var same: Bool { refused == nil && differences.allSatisfy { $0.allowed != nil } }

        enum CodingKeys: String, CodingKey {
            case file, method, path, differences, refused, same
        }

        public init(file: String, method: String, path: String, differences: [Difference]) {
            self.file = file
            self.method = method
            self.path = path
            self.differences = differences
        }

        public init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            file = try container.decode(String.self, forKey: .file)
            method = try container.decode(String.self, forKey: .method)
            path = try container.decode(String.self, forKey: .path)
            differences = try container.decode([Difference].self, forKey: .differences)
            refused = try container.decodeIfPresent(String.self, forKey: .refused)
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(file, forKey: .file)
            try container.encode(method, forKey: .method)
            try container.encode(path, forKey: .path)
            try container.encode(differences, forKey: .differences)
            try container.encodeIfPresent(refused, forKey: .refused)
            try container.encode(same, forKey: .same)
        }
    }

    public var exchanges: [Exchange]

    public var sameCount: Int { exchanges.count { $0.same } }
    /// Exchanges sent whose answers differ.
    public var differCount: Int { exchanges.count - sameCount - refusedCount }
    /// Exchanges not sent: they fail the replay as a difference does.
    public var refusedCount: Int { exchanges.count { $0.refused != nil } }
    public var allowedCount: Int { exchanges.reduce(0) { $0 + $1.differences.count { $0.allowed != nil } } }
    public var succeeded: Bool { differCount == 0 && refusedCount == 0 }

    /// `N exchanges, M the same, K differ`, how many were refused, and how many differences were allowed.
    public var summary: String {
        var line =
            "\(exchanges.count) exchange\(exchanges.count == 1 ? "" : "s"), \(sameCount) the same, \(differCount) differ"
        if refusedCount > 0 { line += ", \(refusedCount) refused" }
        if allowedCount > 0 { line += " (\(allowedCount) allowed difference\(allowedCount == 1 ? "" : "s"))" }
        return line
    }

    /// One line an exchange, its differences beneath, and the summary.
    public var text: String {
        var lines: [String] = []
        for exchange in exchanges {
            let head = "\(exchange.file)  \(exchange.method) \(exchange.path)"
            if let refused = exchange.refused {
                lines.append("\(head): refused: \(refused)")
                continue
            }
            if exchange.differences.isEmpty {
                lines.append("\(head): same")
                continue
            }
            let open = exchange.differences.count { $0.allowed == nil }
            lines.append(
                "\(head): "
                    + (open == 0 ? "same (allowed differences only)" : "\(open) difference\(open == 1 ? "" : "s")"))
            for difference in exchange.differences {
                lines.append("  " + difference.message + (difference.allowed.map { " (allowed: \($0))" } ?? ""))
            }
        }
        lines.append(summary)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as JSON: every exchange and difference, and the counts.
    public var json: String {
        struct Document: Encodable {
            var exchanges: [Exchange]
            var total: Int
            var same: Int
            var differ: Int
            var refused: Int
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let data =
            (try? encoder.encode(
                Document(
                    exchanges: exchanges, total: exchanges.count, same: sameCount, differ: differCount,
                    refused: refusedCount)))
            ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The report as JUnit XML: one test case an exchange, failing with its differences.
    public func junitXML(recording: String) -> String {
        let failures = differCount + refusedCount
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml +=
            "<testsuites name=\"sharelane replay\" tests=\"\(exchanges.count)\" failures=\"\(failures)\" errors=\"0\">\n"
        xml += "  <testsuite name=\"\(Self.xml("replay \(recording)"))\" tests=\"\(exchanges.count)\" "
        xml += "failures=\"\(failures)\" errors=\"0\" skipped=\"0\">\n"
        for exchange in exchanges {
            xml += "    <testcase name=\"\(Self.xml("\(exchange.file) \(exchange.method) \(exchange.path)"))\" "
            xml += "classname=\"\(Self.xml(recording))\""
            if exchange.same {
                xml += "/>\n"
            } else if let refused = exchange.refused {
                xml += ">\n      <failure message=\"refused\">\(Self.xml(refused))</failure>\n    </testcase>\n"
            } else {
                let open = exchange.differences.filter { $0.allowed == nil }
                xml +=
                    ">\n      <failure message=\"\(Self.xml("\(open.count) difference\(open.count == 1 ? "" : "s")"))\">"
                xml += Self.xml(open.map(\.message).joined(separator: "\n"))
                xml += "</failure>\n    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    static func xml(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }
}
