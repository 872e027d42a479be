import ShareKit

/// The recipes `sharelane init` writes: a commented starter that plans, applies and runs its lane as written,
/// and the lane that checks a recipe exported from a store against that store.
public enum StarterRecipe {
    /// The lane of the starter recipe, and of a recipe started from a store.
    public static let laneName = "check"

    /// The starter recipe named `name` for `container`: three users, one zone shared zone-wide with one of
    /// them, and a lane in which that user accepts and adds a record, then `expect` steps check who can see
    /// and change what. Each key is commented with what it means.
    public static func yaml(name: String, container: String) -> String {
        """
        # A sharelane recipe: what a CloudKit container should hold (zones, records, shares, participants),
        # and lanes: steps that its users then take. Every key is described in sharelane's Docs/RecipeFormat.md.
        #
        #   sharelane validate sharelane.yaml   check this file; nothing is read or written
        #   sharelane plan                      what `apply` would change (in .sharelane/store.sqlite by default)
        #   sharelane apply                     make the store hold what this file declares
        #   sharelane run check                 the lane below: apply, bob accepts and adds a note, then checks
        #   sharelane access                    who can see and change what, once applied
        #
        # --store URL (or SHARELANE_STORE) picks another store: memory:, http://127.0.0.1:8420 (`sharelane
        # serve`), or cloudkit: (Apple's service; set `container:` to your container's identifier).
        sharelane: 1                      # the recipe format's version
        name: \(RecipeWriter.string(name))\(pad(name, after: "name: "))# names the recipe in plans and logs
        container: \(RecipeWriter.string(container))\(pad(container, after: "container: "))# cloudkit: needs your real one
        environment: development          # development | production

        users:                            # people, by handle; a lane step acts as one of them (`as: bob`)
          alice: { email: alice@example.com, name: Alice }
          bob: { email: bob@example.com, name: Bob }
          carol: { email: carol@example.com, name: Carol }

        owner: alice                      # whose private database holds the zones below

        zones:
          Notes:                          # a custom zone in alice's private database
            share:                        # shared zone-wide; a `share:` under a record shares its hierarchy instead
              title: Shared notes
              public_permission: none     # none | read-only | read-write (anyone with the link)
              participants:               # the complete list: participants not named here are removed
                bob: { permission: read-write, accepted: false }   # bob accepts in the lane below
            records:
              welcome:                    # the record's name
                type: Note                # its record type; field types follow the YAML values
                fields:
                  title: Welcome
                  body: Notes that alice shares with bob.
                children:                 # records whose parent is `welcome`
                  first-step: { type: Note, fields: { title: Read the plan, done: false } }

        lanes:
          \(laneName):
            desc: Apply the recipe; bob accepts the share and adds a note; check who can see and change what.
            steps:
              - apply                                   # zones, records, the share and its participants
              - accept: { as: bob, zone: Notes }         # bob opens the share's link
              - save: { as: bob, zone: Notes, record: from-bob, type: Note, parent: welcome, fields: { title: Hello from Bob, done: false } }
              - expect: { field: { zone: Notes, record: from-bob, name: title, equals: Hello from Bob } }   # alice sees it
              - expect: { as: bob, records: 3, zone: Notes }                 # welcome, first-step, from-bob
              - expect: { as: bob, can: delete, zone: Notes, record: first-step }   # bob may change the zone
              - expect: { as: carol, can: read, zone: Notes, to_be: false }       # carol was never invited

        """
    }

    /// Spaces that put the comment after `key: value` in the starter's comment column (35), or one space
    /// when the value is longer.
    private static func pad(_ value: String, after key: String) -> String {
        let width = key.count + RecipeWriter.string(value).count
        return String(repeating: " ", count: max(1, 34 - width))
    }

    /// The `lanes:` section for a recipe exported from a store: a lane named `check` whose `expect` steps
    /// check that the store still holds as many records in each declared zone as the export found, and that
    /// each accepted participant of a share can still read what it shares. Empty when the recipe declares no
    /// zone (a lane needs a step).
    public static func checkLane(for recipe: Recipe) -> String {
        var steps: [String] = []
        for zone in recipe.zones where !zone.absent {
            let zoneName = RecipeWriter.string(zone.name)
            let count = zone.records.filter { !$0.absent }.count
            steps.append("- expect: { records: \(count), zone: \(zoneName) }")
            if case .share(let share)? = zone.share {
                for participant in share.participants where participant.accepted {
                    steps.append(
                        "- expect: { as: \(RecipeWriter.string(participant.handle)), can: read, zone: \(zoneName) }")
                }
            }
            for record in zone.records where !record.absent {
                guard case .share(let share)? = record.share else { continue }
                for participant in share.participants where participant.accepted {
                    steps.append(
                        "- expect: { as: \(RecipeWriter.string(participant.handle)), can: read, zone: \(zoneName), "
                            + "record: \(RecipeWriter.string(record.name)) }")
                }
            }
        }
        guard !steps.isEmpty else { return "" }
        return """

            lanes:
              \(laneName):
                desc: Check that the store still holds what it held when this recipe was exported from it.
                steps:
            \(steps.map { "      " + $0 }.joined(separator: "\n"))

            """
    }
}
