import Foundation

/// A page for each built-in lane step, as `sharelane actions NAME` prints it.
///
/// The keys come from the decoder's own table (`RecipeDecoder.actionKeys`), so a key the decoder learns shows on
/// its page without another edit; only the words (what an action does, what a key means, an example) live here.
public enum StepPages {
    /// One built-in step's page.
    public struct Page: Sendable {
        public var name: String
        public var summary: String
        /// Each key the step takes, whether it must be given, and what it means.
        public var keys: [(name: String, required: Bool, meaning: String)]
        public var example: String
    }

    /// The built-in steps, in the order `sharelane actions` lists them.
    public static let names: [String] = RecipeDecoder.actionNames

    /// What each built-in step does, in a line.
    static let summaries: [String: String] = [
        "plan": "plan the recipe", "apply": "apply the recipe", "accept": "accept a share as a participant",
        "leave": "leave a share", "remove": "take a participant off a share, as its owner",
        "permission": "change a participant's permission, as the share's owner", "save": "save a record as a user",
        "delete": "delete a record as a user",
        "expect": "check access or contents, without changing anything (within: to wait)",
        "export": "write the live state as a recipe", "reset": "wipe a local store", "lane": "call another lane",
        "query": "query records as a user (within: to wait)",
        "deploy_schema": "deploy development's schema to production",
        "subscribe": "save a subscription and receive its notifications",
        "sh": "run a command on this machine (register: keeps its output)",
    ]

    /// Keys a step must be given (beyond those, one of several may be needed: the summary's example shows how).
    static let required: [String: Set<String>] = [
        "remove": ["zone", "participant"], "permission": ["zone", "participant", "to"],
        "save": ["zone", "record", "type"], "delete": ["zone", "record"], "leave": ["zone"], "query": ["type"],
        "sh": ["run"], "lane": ["name"], "subscribe": ["id"],
    ]

    /// What a key means, the same for every step that takes it unless `meaningFor` says otherwise.
    static let meanings: [String: String] = [
        "as": "the user (a handle) the step acts as; the zone's owner when left out",
        "name": "the step's name in reports (JUnit test case), instead of its words",
        "zone": "the zone, one the recipe declares (or `undeclared: true`)",
        "record": "the record (its name in the recipe)",
        "url": "a share's URL, as a person who opened the link (`${share_url:ZONE}` or a registered value)",
        "participant": "the participant, by handle",
        "to": "the new permission: `read-only` or `read-write`",
        "expect_error": "a CloudKit error code the store must refuse the step with (`ACCESS_DENIED`, …)",
        "type": "the record type", "parent": "the parent record's name",
        "fields": "the fields to write, `{ NAME: VALUE }`",
        "environment": "`development` (the default) or `production`",
        "prune": "`true` deletes what the recipe no longer declares",
        "only": "a list of zones to limit the step to",
        "database": "`private` (the default), `shared` or `public`",
        "filter": "a list of `{ field, comparator, value }` filters",
        "sort": "a list of `{ field, ascending }` sort keys", "limit": "at most this many records",
        "expect": "`{ records: N, names: [...] }` the answer must match",
        "within": "keep trying, with backoff, for up to this long (`10s`)",
        "can": "the access checked: `read` or `write`", "to_be": "`true` (the default) or `false`",
        "records": "a record count the zone must hold",
        "field": "`{ zone, record, name, equals }`: a field's value",
        "notified": "a notification the user must have received",
        "id": "the subscription's ID (created, or updated when it exists)",
        "record_type": "a query subscription's record type",
        "fires_on": "a list of `create`, `update`, `delete` (all three by default)",
        "fires_once": "`true` removes the subscription after it fires once",
        "alert": "the notifications' alert text",
        "run": "a command line for `/bin/sh -c`, or a list of the program and its arguments",
        "dir": "the folder it runs in, relative to the recipe's", "env": "variables to add, `{ NAME: VALUE }`",
        "timeout": "stop it after this long (`60s`)", "allow_failure": "`true`: a failure does not fail the lane",
        "register": "keep its output as `${NAME}` for later steps",
        "out": "the file to write (the lane's output when left out)", "zones": "a list of zones to export",
        "parameters": "the called lane's parameters, `{ NAME: VALUE }`",
        "undeclared": "`true`: the zone is another recipe's or the app's, not one under `zones:`",
    ]

    /// A key whose meaning on this step differs from `meanings`.
    static let meaningFor: [String: [String: String]] = [
        "lane": ["name": "the lane to call (`- lane: NAME` says the same)"],
        "subscribe": ["type": "`database` (the default), `zone` or `query`"],
    ]

    /// An example step per action, in YAML.
    static let examples: [String: String] = [
        "plan": "- plan: { only: [Household] }", "apply": "- apply",
        "accept": "- accept: { as: bob, zone: Household }", "leave": "- leave: { as: bob, zone: Household }",
        "remove": "- remove: { zone: Household, participant: bob }",
        "permission": "- permission: { zone: Household, participant: bob, to: read-write }",
        "save": "- save: { as: bob, zone: Household, record: milk, type: Item, fields: { title: Oat milk } }",
        "delete": "- delete: { as: bob, zone: Household, record: milk, expect_error: ACCESS_DENIED }",
        "expect": "- expect: { as: bob, can: read, zone: Household, to_be: true }",
        "export": "- export: { out: exported.yaml }", "reset": "- reset",
        "lane": "- lane: { name: setup, parameters: { ticket: QA-1 } }",
        "query": "- query: { as: bob, zone: Household, type: Item, expect: { records: 1 }, within: 5s }",
        "deploy_schema": "- deploy_schema",
        "subscribe": "- subscribe: { as: bob, id: household-changes, type: zone, zone: Household }",
        "sh": "- sh: { run: \"echo hello\", register: greeting }",
    ]

    /// The page of the built-in step `name`, or nil when no built-in step has that name.
    public static func page(_ name: String) -> Page? {
        guard let keys = RecipeDecoder.actionKeys[name] else { return nil }
        let all = keys + (RecipeDecoder.undeclaredZoneActions.contains(name) ? ["undeclared"] : [])
        let mustHave = required[name] ?? []
        return Page(
            name: name, summary: summary(name),
            keys: all.map { key in
                (key, mustHave.contains(key), meaningFor[name]?[key] ?? meanings[key] ?? "")
            },
            example: examples[name] ?? "- \(name)")
    }

    /// What the built-in step `name` does, in a line.
    public static func summary(_ name: String) -> String { summaries[name] ?? "" }

    /// The page as text: what it does, its keys, an example.
    public static func text(_ page: Page) -> String {
        var lines = ["\(page.name): \(page.summary)", ""]
        if page.keys.isEmpty {
            lines.append("Keys: none")
        } else {
            lines.append("Keys:")
            let width = page.keys.map(\.name.count).max() ?? 0
            for key in page.keys {
                let padded = key.name.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                let need = key.required ? "required  " : "optional  "
                lines.append("  " + padded + need + key.meaning)
            }
        }
        if RecipeDecoder.bareActions.contains(page.name) {
            lines.append("")
            lines.append("Written bare (`- \(page.name)`) when it needs no keys.")
        }
        lines += ["", "Example:", "  " + page.example, "", "See Docs/Lanes.md."]
        return lines.joined(separator: "\n")
    }
}
