import ShareKit

/// One CloudKit Web Services operation as sharelane speaks it: its path under
/// `/database/1/{container}/{environment}/{database}/`, its HTTP methods, the databases it is served in, and
/// how it authenticates. The one catalogue: the client sends these, the emulator routes exactly these, and
/// `Docs/CloudKit.md` lists them (a test keeps the list in step).
public struct WireOperation: Sendable, Hashable, CustomStringConvertible {
    /// Which operation this is, for a `switch` that must answer each one: a new operation is then a compile
    /// error wherever it is not yet answered, not a refusal at run time.
    public let name: Name
    /// The path after the database: `records/modify`.
    public let path: String
    /// `POST`, and `GET` where a request has no body.
    public let methods: [Method]
    /// The databases the operation is served in.
    public let databases: [DatabaseScope]
    /// Whether it is about the signed-in user (who they are, the shares they accept): it goes with the
    /// user's web auth token even where a server-to-server key could sign it.
    public let isAboutTheUser: Bool

    /// The operations by name, one case for each of `all`.
    public enum Name: Sendable, Hashable, CaseIterable {
        case recordsModify, recordsLookup, recordsQuery, recordsResolve, recordsAccept, recordsChanges, zonesList,
            zonesLookup, zonesModify, zonesChanges, changesDatabase, changesZone, usersCurrent, usersLookupEmail,
            usersLookupContacts, usersCaller, usersDiscover, usersLookupPhone, usersLookupID, subscriptionsList,
            subscriptionsLookup, subscriptionsModify, tokensCreate, tokensRegister, schemaLookup, schemaExtend,
            schemaDeploy, usersSettings, assetsUpload, assetsRereference
    }

    public enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
    }

    public var description: String { path }

    /// The full path of the operation in one container, environment and database.
    public func fullPath(container: String, environment: String, database: DatabaseScope) -> String {
        "\(WireSpelling.databasePathPrefix)/\(container)/\(environment)/\(WireSpelling.database(database))/\(path)"
    }

    private static let everyDatabase: [DatabaseScope] = [.public, .private, .shared]

    public static let recordsModify = WireOperation(
        name: .recordsModify, path: "records/modify", methods: [.post], databases: everyDatabase, isAboutTheUser: false)
    public static let recordsLookup = WireOperation(
        name: .recordsLookup, path: "records/lookup", methods: [.post], databases: everyDatabase, isAboutTheUser: false)
    public static let recordsQuery = WireOperation(
        name: .recordsQuery, path: "records/query", methods: [.post], databases: everyDatabase, isAboutTheUser: false)
    public static let recordsResolve = WireOperation(
        name: .recordsResolve, path: "records/resolve", methods: [.post], databases: [.public], isAboutTheUser: true)
    public static let recordsAccept = WireOperation(
        name: .recordsAccept, path: "records/accept", methods: [.post], databases: [.public], isAboutTheUser: true)
    /// Apple's older, one-zone form of `changes/zone`; custom zones of the private and shared databases.
    public static let recordsChanges = WireOperation(
        name: .recordsChanges, path: "records/changes", methods: [.post], databases: [.private, .shared],
        isAboutTheUser: false)
    public static let zonesList = WireOperation(
        name: .zonesList, path: "zones/list", methods: [.get, .post], databases: everyDatabase, isAboutTheUser: false)
    public static let zonesLookup = WireOperation(
        name: .zonesLookup, path: "zones/lookup", methods: [.post], databases: everyDatabase, isAboutTheUser: false)
    public static let zonesModify = WireOperation(
        name: .zonesModify, path: "zones/modify", methods: [.post], databases: everyDatabase, isAboutTheUser: false)
    /// Apple's older form of `changes/database` (deprecated by Apple), with `metaSyncToken`.
    public static let zonesChanges = WireOperation(
        name: .zonesChanges, path: "zones/changes", methods: [.post], databases: [.private, .shared],
        isAboutTheUser: false)
    /// Private and shared databases only, as Apple's ("Only private and shared databases support this
    /// operation"): asked of the public database it answers 400 `BAD_REQUEST`.
    public static let changesDatabase = WireOperation(
        name: .changesDatabase, path: "changes/database", methods: [.post], databases: [.private, .shared],
        isAboutTheUser: false)
    public static let changesZone = WireOperation(
        name: .changesZone, path: "changes/zone", methods: [.post], databases: everyDatabase, isAboutTheUser: false)
    public static let usersCurrent = WireOperation(
        name: .usersCurrent, path: "users/current", methods: [.get, .post], databases: [.public], isAboutTheUser: true)
    public static let usersLookupEmail = WireOperation(
        name: .usersLookupEmail, path: "users/lookup/email", methods: [.post], databases: [.public],
        isAboutTheUser: true)

    /// The caller's address book's discoverable users ("Fetching Contacts"); served by the emulator as an
    /// empty list, having no address books. GET as well, as CloudKit JS 1.x may send it without a body.
    public static let usersLookupContacts = WireOperation(
        name: .usersLookupContacts, path: "users/lookup/contacts", methods: [.get, .post], databases: [.public],
        isAboutTheUser: true)

    public static let usersCaller = WireOperation(
        name: .usersCaller, path: "users/caller", methods: [.get, .post], databases: [.public], isAboutTheUser: true)
    /// POST with `lookupInfos`; GET (the reference's "the caller's address book") answers 500 as live does.
    public static let usersDiscover = WireOperation(
        name: .usersDiscover, path: "users/discover", methods: [.get, .post], databases: [.public], isAboutTheUser: true
    )
    public static let usersLookupPhone = WireOperation(
        name: .usersLookupPhone, path: "users/lookup/phone", methods: [.post], databases: [.public],
        isAboutTheUser: true)
    public static let usersLookupID = WireOperation(
        name: .usersLookupID, path: "users/lookup/id", methods: [.post], databases: [.public], isAboutTheUser: true)
    public static let subscriptionsList = WireOperation(
        name: .subscriptionsList, path: "subscriptions/list", methods: [.get, .post], databases: everyDatabase,
        isAboutTheUser: false)
    public static let subscriptionsLookup = WireOperation(
        name: .subscriptionsLookup, path: "subscriptions/lookup", methods: [.post], databases: everyDatabase,
        isAboutTheUser: false)
    public static let subscriptionsModify = WireOperation(
        name: .subscriptionsModify, path: "subscriptions/modify", methods: [.post], databases: everyDatabase,
        isAboutTheUser: false)
    /// The reference's path for tokens; the live service and CloudKit JS use `devicePath` instead (the
    /// database path answers 405 there). `sharelane serve` answers both; the client sends `devicePath`.
    public static let tokensCreate = WireOperation(
        name: .tokensCreate, path: "tokens/create", methods: [.post], databases: everyDatabase, isAboutTheUser: true)
    public static let tokensRegister = WireOperation(
        name: .tokensRegister, path: "tokens/register", methods: [.post], databases: everyDatabase, isAboutTheUser: true
    )

    /// The path of a token operation as the live service and CloudKit JS send it:
    /// `/device/1/{container}/{environment}/tokens/create`.
    public func devicePath(container: String, environment: String) -> String {
        "\(WireSpelling.devicePathPrefix)/\(container)/\(environment)/\(path)"
    }

    // sharelane's own, served by `sharelane serve` only: Apple manages schemas outside Web Services
    // (`cktool`, the CloudKit Console), so these stand in for `cktool export-schema`, `import-schema` and the
    // Console's "Deploy Schema Changes". The environment is the path's.
    public static let schemaLookup = WireOperation(
        name: .schemaLookup, path: "schema/lookup", methods: [.get, .post], databases: [.public], isAboutTheUser: false)
    public static let schemaExtend = WireOperation(
        name: .schemaExtend, path: "schema/extend", methods: [.post], databases: [.public], isAboutTheUser: false)
    public static let schemaDeploy = WireOperation(
        name: .schemaDeploy, path: "schema/deploy", methods: [.post], databases: [.public], isAboutTheUser: false)
    /// The signed-in user's phone number and discoverability (on Apple's service a user sets them in an app).
    public static let usersSettings = WireOperation(
        name: .usersSettings, path: "users/settings", methods: [.get, .post], databases: [.public], isAboutTheUser: true
    )

    /// Upload URLs for asset fields: `{zoneID?, tokens: [{recordName?, recordType, fieldName}]}` →
    /// `{tokens: [{recordName, fieldName, url}]}`; the bytes then go to each `url`.
    public static let assetsUpload = WireOperation(
        name: .assetsUpload, path: "assets/upload", methods: [.post], databases: everyDatabase, isAboutTheUser: false)

    /// Asset dictionaries of assets records already hold, to save in other records without uploading the
    /// bytes again: `{zoneID?, assets: [{recordName, fieldName}]}` → `{assets: [asset]}`.
    public static let assetsRereference = WireOperation(
        name: .assetsRereference, path: "assets/rereference", methods: [.post], databases: everyDatabase,
        isAboutTheUser: false)

    /// Every operation, in the order the docs list them.
    public static let all: [WireOperation] = [
        recordsModify, recordsLookup, recordsQuery, recordsChanges, recordsResolve, recordsAccept, zonesList,
        zonesLookup, zonesModify, zonesChanges, changesDatabase, changesZone, usersCurrent, usersLookupEmail,
        schemaLookup, schemaExtend,
        schemaDeploy,
        // Users as Apple.
        usersCaller, usersDiscover, usersLookupPhone, usersLookupID, usersLookupContacts, usersSettings,
        // Subscriptions and notifications.
        subscriptionsList, subscriptionsLookup, subscriptionsModify, tokensCreate, tokensRegister,
        // Assets.
        assetsUpload, assetsRereference,
    ]

    /// Every request of Web Services as a method and a path pattern (`*` stands for one part of the path): each
    /// operation of `all` in each database it is served in, the token operations on the device path too,
    /// sign-in, the notification long poll and assets' bytes. What `sharelane replay` may send, and nothing
    /// else: no console page, no sign-in form, none of serve's own endpoints (`/_sharelane/…`).
    public static var requestPatterns: [(method: Method, pattern: String)] {
        var patterns: [(method: Method, pattern: String)] = []
        for operation in all {
            for database in operation.databases {
                let pattern = operation.fullPath(container: "*", environment: "*", database: database)
                patterns += operation.methods.map { ($0, pattern) }
            }
        }
        for operation in [tokensCreate, tokensRegister] {
            patterns += operation.methods.map { ($0, operation.devicePath(container: "*", environment: "*")) }
        }
        patterns += [
            (.post, WireSpelling.signInPath), (.post, WireSpelling.signInBatchPath),
            (.get, WireSpelling.webcourierPath),
            (.post, WireAsset.uploadPath), (.get, WireAsset.downloadPathPrefix + "/*/*"),
        ]
        return patterns
    }
}
