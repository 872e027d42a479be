import ShareKit

/// A failure of planning, applying or exporting, naming the thing at fault and what to do.
public enum PlannerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The recipe names a handle that is not among its users.
    case unknownUser(handle: String)
    /// The store found no account for a user the recipe names.
    case userNotFound(handle: String, email: String)
    /// A store call failed while reading the live state.
    case storeFailed(operation: String, subject: String, ShareError)
    /// A saved plan no longer matches the live store; `changes` names what differs.
    case stalePlan(changes: [String])
    /// A saved plan was made against another store.
    case wrongStore(planned: String, actual: String)
    /// A saved plan file could not be read.
    case unreadablePlan(path: String, reason: String)
    /// A `!share-url` names a share that the recipe does not declare and that does not exist.
    case unknownShare(path: String, field: String, record: String)
    /// Export was asked for a zone that does not exist.
    case zoneNotFound(zone: String)
    /// A `--target` that is not an address as plans print it.
    case invalidTarget(String)
    /// A `--target` address that names nothing the recipe declares (nor the live store holds): a typo, most
    /// often; with the closest declared address.
    case unknownTarget(String, closest: String?)
    /// Fields the recipe gives another type than the live schema has, each with its place in the recipe.
    case schemaConflicts([String])
    /// A production schema lacks what the recipe needs; it changes only by deploying development's.
    case undeployedSchema(storeName: String, changes: [String])

    public var description: String {
        switch self {
        case .schemaConflicts(let lines):
            return "the recipe contradicts the live schema, so nothing was planned:\n"
                + lines.map { "  \($0)" }.joined(separator: "\n")
        case .undeployedSchema(let storeName, let changes):
            return "the production schema of \(storeName) lacks what the recipe needs:\n"
                + changes.prefix(20).map { "  \($0)" }.joined(separator: "\n")
                + (changes.count > 20 ? "\n  … and \(changes.count - 20) more" : "")
                + "\nProduction changes only by deploying: apply the recipe in development, then run "
                + "`sharelane schema deploy`."
        case .invalidTarget(let text):
            return
                "--target '\(text)' is not an address: write it as plans print it, `KIND NAME` with KIND zone, record, share or participant (--target 'zone FamilyLists', --target 'record Trips/italy', or without quotes --target record.Trips/italy)"
        case .unknownTarget(let text, let closest):
            return "--target '\(text)' names nothing the recipe declares"
                + (closest.map { "; did you mean '\($0)'?" } ?? "")
                + " (addresses are as plans print them: 'zone NAME', 'record ZONE/NAME', 'share ZONE', 'participant ZONE/HANDLE')"
        case .unknownUser(let handle):
            return "the recipe names user '\(handle)', who is not among its users: add '\(handle)' under users:"
        case .userNotFound(let handle, let email):
            return
                "the store has no account for user '\(handle)' (\(email)): check the email address, or ask \(handle) to sign in to iCloud once"
        case .storeFailed(let operation, let subject, let error):
            return "\(operation) failed for \(subject): \(error)"
        case .stalePlan(let changes):
            let shown = changes.prefix(20).map { "  - \($0)" }.joined(separator: "\n")
            let more = changes.count > 20 ? "\n  … and \(changes.count - 20) more" : ""
            return """
                the saved plan is stale: \(Self.staleWhat(changes)) changed since it was planned, so nothing was applied.
                \(shown)\(more)
                Run `sharelane plan --out FILE` again, review it, and apply the new plan.
                """
        case .wrongStore(let planned, let actual):
            return
                "the saved plan was made against \(planned), not \(actual): apply it with --store \(planned), or plan again against \(actual)"
        case .unreadablePlan(let path, let reason):
            return "cannot read the saved plan \(path): \(reason); write one with `sharelane plan --out \(path)`"
        case .unknownShare(let path, let field, let record):
            return
                "field '\(field)' of record \(record) is !share-url \(path), but no such share is declared or live: declare a share on \(path)"
        case .zoneNotFound(let zone):
            return "zone '\(zone)' does not exist in the owner's private database: check the name with `sharelane show`"
        }
    }

    /// What a stale plan's differences are about: the store, the plan's asset files, or both.
    static func staleWhat(_ changes: [String]) -> String {
        let files = changes.filter { $0.hasPrefix("asset file ") }.count
        if files == 0 { return "the store" }
        if files == changes.count { return files == 1 ? "a file it uploads" : "files it uploads" }
        return "the store and files it uploads"
    }
}
