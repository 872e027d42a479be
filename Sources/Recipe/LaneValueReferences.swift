import ShareKit

/// Checks, before anything runs, that each value a lane hands on is written where it will have one: `${NAME}`
/// after a step that registers `NAME` (in the same lane, in `before_all`, or in a lane called before it),
/// `${share_url:…}` and `${record_name:HANDLE}` in lane steps only, with a handle the recipe declares.
///
/// It reads the recipe as written, before variables are put in, so that each reference is found at its own
/// line and column, and an escaped `$${…}` is left alone.
struct LaneValueReferences {
    /// What one scalar of the recipe refers to.
    struct Reference {
        var body: Substring
        var location: SourceLocation
    }

    /// Every name a step registers anywhere (`register: NAME`): `${NAME}` is then a lane's value.
    let registered: Set<String>
    let handles: Set<String>
    /// The zones the recipe declares, as written.
    let zones: Set<String>
    private(set) var errors: [RecipeError] = []

    init(tree: RecipeNode, registered: Set<String>) {
        self.registered = registered
        self.handles = Set(tree["users"]?.pairs?.map(\.key) ?? [])
        self.zones = Set(tree["zones"]?.pairs?.map(\.key) ?? [])
        check(tree)
    }

    // MARK: - Where values may be used

    private mutating func check(_ tree: RecipeNode) {
        let hookKeys = ["before_all", "after_all", "error", "before_each", "after_each"]
        for pair in tree.pairs ?? [] where pair.key != "lanes" && pair.key != "vars" && !hookKeys.contains(pair.key) {
            outsideLanes(pair.value)
        }
        var lanes: [String: [RecipeNode]] = [:]
        for pair in tree["lanes"]?.pairs ?? [] {
            lanes[pair.key] = Self.steps(pair.value.items != nil ? pair.value : pair.value["steps"])
        }
        let beforeAll = Self.steps(tree["before_all"])
        // What before_all registers is there for every lane.
        var entry = Set<String>()
        walk(beforeAll, available: &entry, lanes: lanes)
        // before_each runs before every lane, after before_all: what it registers is there for every lane too.
        walk(Self.steps(tree["before_each"]), available: &entry, lanes: lanes)
        // A lane called from another starts with what the caller had at the call, besides before_all's.
        var entries = lanes.mapValues { _ in entry }
        for _ in 0...lanes.count {
            var changed = false
            for (_, steps) in lanes {
                for (callee, had) in callSites(steps, lanes: lanes) {
                    guard let known = entries[callee], !had.isSubset(of: known) else { continue }
                    entries[callee] = known.union(had)
                    changed = true
                }
            }
            if !changed { break }
        }
        for (name, steps) in lanes.sorted(by: { $0.key < $1.key }) {
            var available = entries[name] ?? entry
            walk(steps, available: &available, lanes: lanes)
        }
        // after_each, after_all and error run after any lane: what any step registered may be there.
        var afterwards = registered
        var afterEach = registered
        walk(Self.steps(tree["after_each"]), available: &afterEach, lanes: lanes)
        walk(Self.steps(tree["after_all"]), available: &afterwards, lanes: lanes)
        var onError = afterwards.union(LaneValueNames.errorHook)
        walk(Self.steps(tree["error"]), available: &onError, lanes: lanes)
    }

    /// The steps of a lane or hook node.
    private static func steps(_ node: RecipeNode?) -> [RecipeNode] { node?.items ?? [] }

    /// Checks each step's references in order, adding what each step registers to `available`.
    private mutating func walk(
        _ steps: [RecipeNode], available: inout Set<String>, lanes: [String: [RecipeNode]]
    ) {
        for step in steps {
            for reference in Self.references(in: step) {
                insideLane(reference, available: available)
            }
            available.formUnion(Self.registers(step, lanes: lanes, seen: []))
        }
    }

    /// For each `lane:` step in `steps`, the callee and the names there when it is called.
    private func callSites(_ steps: [RecipeNode], lanes: [String: [RecipeNode]]) -> [(String, Set<String>)] {
        var sites: [(String, Set<String>)] = []
        var available = Set<String>()
        for step in steps {
            if let callee = Self.calledLane(step) { sites.append((callee, available)) }
            available.formUnion(Self.registers(step, lanes: lanes, seen: []))
        }
        return sites
    }

    /// The names a step registers: its own `register:`, or everything a lane it calls registers.
    private static func registers(_ step: RecipeNode, lanes: [String: [RecipeNode]], seen: Set<String>) -> Set<String> {
        if let callee = calledLane(step) {
            guard !seen.contains(callee), let steps = lanes[callee] else { return [] }
            return steps.reduce(into: Set<String>()) {
                $0.formUnion(registers($1, lanes: lanes, seen: seen.union([callee])))
            }
        }
        guard let arguments = step.pairs?.first?.value, let name = arguments["register"]?.scalar else { return [] }
        return [name]
    }

    private static func calledLane(_ step: RecipeNode) -> String? {
        guard let pair = step.pairs?.first, step.pairs?.count == 1, pair.key == "lane" else { return nil }
        return pair.value.scalar ?? pair.value["name"]?.scalar
    }

    private mutating func insideLane(_ reference: Reference, available: Set<String>) {
        let body = reference.body
        if let handle = Self.argument(of: "record_name:", in: body) {
            if !handles.contains(handle) {
                let hint = Suggestion.hint(for: handle, in: Array(handles))
                errors.append(
                    RecipeError(
                        "`${\(body)}` names no user of the recipe"
                            + (hint.isEmpty ? "; write `${record_name:HANDLE}` with a handle under `users:`" : hint),
                        at: reference.location))
            }
            return
        }
        if let target = Self.argument(of: "share_url:", in: body) {
            // The runner reads the zone's name as written: nothing inside it is filled in.
            let zone = String(target.split(separator: "/", maxSplits: 1).first ?? "")
            if target.contains("$") || target.contains("{") {
                errors.append(
                    RecipeError(
                        "`${\(body)}`: a `${…}` inside `${share_url:…}` is not filled in; write the zone's name as the "
                            + "recipe declares it (`${share_url:ZONE}` or `${share_url:ZONE/RECORD}`)",
                        at: reference.location))
            } else if !zones.isEmpty, !zones.contains(where: { $0.contains("$") }), !zones.contains(zone) {
                let hint = Suggestion.hint(for: zone, in: Array(zones))
                errors.append(
                    RecipeError(
                        "`${\(body)}` names no zone of the recipe"
                            + (hint.isEmpty ? "; write `${share_url:ZONE}` with a zone under `zones:`" : hint),
                        at: reference.location))
            }
            return
        }
        let name = String(body.split(separator: ".", maxSplits: 1).first ?? body)
        if LaneValueNames.errorHook.contains(name), !available.contains(name) {
            errors.append(
                RecipeError(
                    "`${\(body)}` has a value only in the steps of the `error` hook, which runs after a step failed",
                    at: reference.location))
            return
        }
        guard registered.contains(name), !available.contains(name) else { return }
        errors.append(
            RecipeError(
                "`${\(body)}` has no value here: no step before this one registers `\(name)`; move the step with "
                    + "`register: \(name)` before it (or into `before_all`)", at: reference.location))
    }

    private mutating func outsideLanes(_ node: RecipeNode) {
        for reference in Self.references(in: node) {
            let body = reference.body
            let message: String
            if let zone = Self.argument(of: "share_url:", in: body) {
                message =
                    "`${\(body)}` is filled in only in a lane's steps; a record's field takes the share's URL as `!share-url \(zone)`"
            } else if body.hasPrefix("record_name:") {
                message = "`${\(body)}` is filled in only in a lane's steps, where the users are signed in"
            } else if LaneValueNames.errorHook.contains(String(body)) {
                message =
                    "`${\(body)}` has a value only in the steps of the `error` hook, which runs after a step failed"
            } else if body == LaneValueNames.lane {
                message = "`${lane}` is the name of the lane running, filled in only in a lane's steps and hooks"
            } else {
                let name = String(body.split(separator: ".", maxSplits: 1).first ?? body)
                guard registered.contains(name) else { continue }
                message =
                    "`${\(body)}` is what a lane step registers (`register: \(name)`), which only later steps of a lane can use; "
                    + "here, use a variable of `vars:` or `--var` under another name"
            }
            errors.append(RecipeError(message, at: reference.location))
        }
    }

    private static func argument(of prefix: String, in body: Substring) -> String? {
        guard body.hasPrefix(prefix) else { return nil }
        return String(body.dropFirst(prefix.count))
    }

    // MARK: - Finding references

    /// The `${…}` written in a node's scalars and keys (`$${…}` is an escape, not a reference), each at its
    /// own column when the scalar is on one line.
    static func references(in node: RecipeNode) -> [Reference] {
        var found: [Reference] = []
        func visit(_ node: RecipeNode) {
            switch node.content {
            case .scalar(let text, let plain):
                found += references(in: text, at: node.location, plain: plain)
            case .sequence(let items): items.forEach(visit)
            case .mapping(let pairs):
                for pair in pairs {
                    found += references(in: pair.key, at: pair.keyLocation, plain: true)
                    visit(pair.value)
                }
            }
        }
        visit(node)
        return found
    }

    private static func references(in text: String, at location: SourceLocation, plain: Bool) -> [Reference] {
        guard text.contains("${") else { return [] }
        // Columns within the scalar are exact for text on one line that the YAML wrote as it reads (plain, or
        // quoted without escapes); elsewhere the scalar's own place is given.
        let exact = !text.contains("\n") && (plain || !(text.contains("\\") || text.contains("'")))
        let shift = plain ? 0 : 1
        var found: [Reference] = []
        var index = text.startIndex
        while let open = text[index...].range(of: "${") {
            if open.lowerBound > text.startIndex, text[text.index(before: open.lowerBound)] == "$" {
                index = open.upperBound
                continue
            }
            guard let close = text[open.upperBound...].firstIndex(of: "}") else { break }
            var place = location
            if exact { place.column += shift + text.distance(from: text.startIndex, to: open.lowerBound) }
            found.append(Reference(body: text[open.upperBound..<close], location: place))
            index = text.index(after: close)
        }
        return found
    }
}

/// The values the lane runner itself hands on.
public enum LaneValueNames {
    /// What made the lane fail (`expectation failed: expected …`), in the `error` hook.
    public static let laneError = "lane_error"
    /// Where the failed step is written (`FILE:LINE:COLUMN`), in the `error` hook.
    public static let laneErrorPlace = "lane_error_place"
    /// The names only the `error` hook's steps have.
    public static let errorHook: Set<String> = [laneError, laneErrorPlace]
    /// The name of the lane running, in every lane step and hook: in `before_each` and `after_each` the lane they
    /// run around (the command line's or one a `lane:` step calls); in `before_all`, `after_all` and `error` the
    /// lane the command line runs.
    public static let lane = "lane"
}
