import Foundation
import Recipe
import SharingReport

// A lane run as CI servers read it: JUnit XML (one test case a step, named by its line) and JSON, and the
// annotation GitHub Actions shows beside the line that failed.
extension LaneReport {
    /// The run as a JUnit XML document (the Ant JUnit schema CI servers read): one `testsuite` for the lane,
    /// one `testcase` a step (`classname` the recipe's file and lane, `name` the step's line and place), a
    /// failed step's `failure` with its message and `FILE:LINE:COLUMN`, times in seconds, and what each
    /// command printed in the suite's `system-out`.
    public func junitXML(recipeFile: String) -> String {
        let failures = steps.count { !$0.succeeded }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"sharelane\" tests=\"\(steps.count)\" failures=\"\(failures)\" errors=\"0\" "
        xml += "time=\"\(Self.seconds(milliseconds))\">\n"
        xml += "  <testsuite name=\"\(HTML.xml("lane \(lane)"))\" tests=\"\(steps.count)\" "
        xml += "failures=\"\(failures)\" errors=\"0\" skipped=\"0\" time=\"\(Self.seconds(milliseconds))\" "
        xml += "timestamp=\"\(Self.timestamp())\" hostname=\"localhost\">\n"
        xml += "    <properties><property name=\"recipe\" value=\"\(HTML.xml(recipeFile))\"/></properties>\n"
        for step in steps {
            let name = (step.hook.map { "\($0): " } ?? "") + step.summary + " (line \(step.location.line))"
            xml += "    <testcase name=\"\(HTML.xml(name))\" "
            xml += "classname=\"\(HTML.xml(Self.className(recipeFile, lane)))\" "
            xml += "time=\"\(Self.seconds(step.milliseconds))\" file=\"\(HTML.xml(step.location.file))\" "
            xml += "line=\"\(step.location.line)\""
            if let error = step.error {
                let message = Self.message(of: error)
                xml += ">\n      <failure message=\"\(HTML.xml(message))\" type=\"\(Self.kind(of: error))\">"
                xml += HTML.xml("\(error.location ?? step.location): \(message)")
                xml += "</failure>\n    </testcase>\n"
            } else {
                xml += "/>\n"
            }
        }
        // The Ant schema has one system-out, the suite's: each command's output under its step's name. Every
        // line ends with a newline, so a command's last line reads the same whichever stream printed it.
        let printed = steps.compactMap { step in
            step.output.map { "--- " + step.summary + " (line \(step.location.line)) ---\n" + $0 + "\n" }
        }
        xml += "    <system-out>\(HTML.xml(printed.joined(), keepingNewlines: true))</system-out>\n"
        xml += "    <system-err></system-err>\n"
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// The run as JSON: the lane, whether it succeeded, its time, and each step with its place, outcome and
    /// message.
    public func json(recipeFile: String) throws -> Data {
        let object: [String: Any] = [
            "format_version": 1, "recipe": recipeFile, "lane": lane, "succeeded": succeeded,
            "seconds": Double(milliseconds) / 1000,
            "steps": steps.map { step -> [String: Any] in
                var entry: [String: Any] = [
                    "summary": step.summary, "succeeded": step.succeeded, "seconds": Double(step.milliseconds) / 1000,
                    "file": step.location.file, "line": step.location.line, "column": step.location.column,
                    "depth": step.depth,
                ]
                if let detail = step.detail { entry["detail"] = detail }
                if let hook = step.hook { entry["hook"] = hook }
                if let error = step.error { entry["error"] = Self.message(of: error) }
                return entry
            },
        ]
        return try JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    /// GitHub Actions' annotation of the step that failed (`::error file=…,line=…,col=…::message`); nil when
    /// the lane succeeded.
    public var githubAnnotation: String? {
        guard let failed = steps.last(where: { !$0.succeeded }), let error = failed.error else { return nil }
        let place = error.location ?? failed.location
        // Properties and the message are escaped as the workflow commands' documentation says.
        func property(_ text: String) -> String {
            text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
                .replacingOccurrences(of: "\n", with: "%0A").replacingOccurrences(of: ":", with: "%3A")
                .replacingOccurrences(of: ",", with: "%2C")
        }
        let message = Self.message(of: error).replacingOccurrences(of: "%", with: "%25")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
        return "::error file=\(property(place.file)),line=\(place.line),col=\(place.column),"
            + "title=\(property("lane \(lane)"))::\(message)"
    }

    /// The error's message without its place (the report gives the place apart).
    static func message(of error: LaneError) -> String {
        let text = error.description
        guard let place = error.location.map({ "\($0): error: " }), text.hasPrefix(place) else { return text }
        return String(text.dropFirst(place.count))
    }

    static func kind(of error: LaneError) -> String {
        if case .expectationFailed = error { return "expectation" }
        return "step"
    }

    /// `trips.demo`: the recipe file's name and the lane, as CI servers group test classes by their dots.
    static func className(_ recipeFile: String, _ lane: String) -> String {
        let name = URL(fileURLWithPath: recipeFile).deletingPathExtension().lastPathComponent
        return "\(name).\(lane)"
    }

    static func seconds(_ milliseconds: Int) -> String {
        String(format: "%.3f", Double(milliseconds) / 1000)
    }

    static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        // The Ant schema's timestamp has no zone designator.
        return String(formatter.string(from: Date()).dropLast())
    }
}
