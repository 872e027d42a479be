import Foundation
import Recipe
import SharingReport

// A lane run as CI servers read it: JUnit XML (one test case a step, named by what it is) and JSON, and the
// annotation GitHub Actions shows beside the line that failed.
extension LaneReport {
    /// One lane's part of a JUnit report: its test cases, or why it could not start.
    public struct Suite: Sendable, Hashable {
        public var lane: String
        public var recipeFile: String
        public var cases: [TestCase]
        public var milliseconds: Int

        /// A lane that did not start (a lock held past its time, a recipe that does not load): one case,
        /// `LANE › start`, in error with the reason, at the lane's line when it has one.
        public static func unstarted(lane: String, recipeFile: String, location: SourceLocation?, reason: String)
            -> Suite
        {
            let place = location ?? SourceLocation(file: recipeFile, line: 1, column: 1)
            let error = LaneError.stepFailed(action: "start lane \(lane)", reason: reason, location: place)
            return Suite(
                lane: lane, recipeFile: recipeFile,
                cases: [
                    TestCase(
                        name: lane + CaseBuilder.separator + "start", milliseconds: 0, location: place,
                        outcome: .notStarted(error), output: nil)
                ], milliseconds: 0)
        }
    }

    /// The run as one suite of a JUnit report.
    public func suite(in recipe: Recipe, interrupted: Bool = false) -> Suite {
        Suite(
            lane: lane, recipeFile: recipe.file, cases: testCases(in: recipe, interrupted: interrupted),
            milliseconds: milliseconds)
    }

    /// The run as a JUnit XML document: `junitXML(suites:)` with this lane's suite.
    public func junitXML(recipe: Recipe, interrupted: Bool = false) -> String {
        Self.junitXML(suites: [suite(in: recipe, interrupted: interrupted)])
    }

    /// Lanes as a JUnit XML document (the Ant JUnit schema CI servers read): a `testsuite` a lane, a
    /// `testcase` a step (`classname` the recipe's file and lane, `name` as `testCases(in:)` names it), a
    /// failed step's `failure` with its message and `FILE:LINE:COLUMN`, an interrupted one's `error`, a step
    /// that did not run `skipped`, times in seconds, and what each command printed in its suite's `system-out`.
    public static func junitXML(suites: [Suite]) -> String {
        func count(_ cases: [TestCase], _ kind: (TestCase.Outcome) -> Bool) -> Int { cases.count { kind($0.outcome) } }
        let isFailure: (TestCase.Outcome) -> Bool = { if case .failed = $0 { true } else { false } }
        let isError: (TestCase.Outcome) -> Bool = {
            switch $0 {
            case .interrupted, .notStarted: true
            case .passed, .failed, .skipped: false
            }
        }
        let isSkipped: (TestCase.Outcome) -> Bool = { $0 == .skipped }
        let all = suites.flatMap(\.cases)
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"sharelane\" tests=\"\(all.count)\" failures=\"\(count(all, isFailure))\" "
        xml += "errors=\"\(count(all, isError))\" skipped=\"\(count(all, isSkipped))\" "
        xml += "time=\"\(seconds(suites.reduce(0) { $0 + $1.milliseconds }))\">\n"
        let timestamp = Self.timestamp()
        for suite in suites {
            let cases = suite.cases
            xml += "  <testsuite name=\"\(HTML.xml("lane \(suite.lane)"))\" tests=\"\(cases.count)\" "
            xml += "failures=\"\(count(cases, isFailure))\" errors=\"\(count(cases, isError))\" "
            xml += "skipped=\"\(count(cases, isSkipped))\" time=\"\(seconds(suite.milliseconds))\" "
            xml += "timestamp=\"\(timestamp)\" hostname=\"localhost\">\n"
            xml += "    <properties><property name=\"recipe\" value=\"\(HTML.xml(suite.recipeFile))\"/></properties>\n"
            let className = HTML.xml(Self.className(suite.recipeFile, suite.lane))
            for testCase in cases {
                xml += "    <testcase name=\"\(HTML.xml(testCase.name))\" classname=\"\(className)\" "
                xml += "time=\"\(seconds(testCase.milliseconds))\" file=\"\(HTML.xml(testCase.location.file))\" "
                xml += "line=\"\(testCase.location.line)\""
                switch testCase.outcome {
                case .passed:
                    xml += "/>\n"
                case .failed(let error):
                    let message = Self.message(of: error)
                    xml += ">\n      <failure message=\"\(HTML.xml(message))\" type=\"\(Self.kind(of: error))\">"
                    xml += HTML.xml("\(error.location ?? testCase.location): \(message)")
                    xml += "</failure>\n    </testcase>\n"
                case .interrupted(let error):
                    let message =
                        error.map { Self.message(of: $0) }
                        ?? "stopped before this step: the run was asked to stop; neither it nor any step after it ran"
                    xml += ">\n      <error message=\"\(HTML.xml(message))\" type=\"interrupted\">"
                    xml += HTML.xml("\(error?.location ?? testCase.location): \(message)")
                    xml += "</error>\n    </testcase>\n"
                case .notStarted(let error):
                    let message = Self.message(of: error)
                    xml += ">\n      <error message=\"\(HTML.xml(message))\" type=\"start\">"
                    xml += HTML.xml("\(error.location ?? testCase.location): \(message)")
                    xml += "</error>\n    </testcase>\n"
                case .skipped:
                    xml +=
                        ">\n      <skipped message=\"not run: the lane stopped before this step\"/>\n    </testcase>\n"
                }
            }
            // The Ant schema has one system-out a suite: each command's output under its step's name. Every
            // line ends with a newline, so a command's last line reads the same whichever stream printed it.
            // A tool's colour codes are removed whole: XML 1.0 cannot hold their ESC, and without it `[31m`
            // would be left in the text.
            let printed = cases.compactMap { testCase in
                testCase.output.map { output in
                    let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
                    return "--- " + testCase.name + " ---\n"
                        + lines.map { ToolText.plain(String($0)) }.joined(separator: "\n") + "\n"
                }
            }
            xml += "    <system-out>\(HTML.xml(printed.joined(), keepingNewlines: true))</system-out>\n"
            xml += "    <system-err></system-err>\n"
            xml += "  </testsuite>\n"
        }
        xml += "</testsuites>\n"
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
        guard let failed = steps.last(where: { !$0.succeeded }), let error = failed.error else {
            return failure.map { Self.githubAnnotation(at: $0.location, lane: lane, message: Self.message(of: $0)) }
        }
        return Self.githubAnnotation(
            at: error.location ?? failed.location, lane: lane, message: Self.message(of: error))
    }

    /// A GitHub Actions error annotation titled with the lane, on `place` when there is one.
    public static func githubAnnotation(at place: SourceLocation?, lane: String, message: String) -> String {
        // Properties and the message are escaped as the workflow commands' documentation says.
        func property(_ text: String) -> String {
            text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
                .replacingOccurrences(of: "\n", with: "%0A").replacingOccurrences(of: ":", with: "%3A")
                .replacingOccurrences(of: ",", with: "%2C")
        }
        let text = message.replacingOccurrences(of: "%", with: "%25")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
        let placement = place.map { "file=\(property($0.file)),line=\($0.line),col=\($0.column)," } ?? ""
        return "::error \(placement)title=\(property("lane \(lane)"))::\(text)"
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
