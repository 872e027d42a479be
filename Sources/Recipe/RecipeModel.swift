import Foundation
import ShareKit

// The declared state a recipe describes, as the planner and the lane runner consume it. The loader
// (YAML → these types) fills it; every declared thing keeps the place in the recipe it came from.

/// A 1-based place in a recipe file.
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}

/// A loaded, validated recipe.
public struct Recipe: Sendable, Hashable, Codable {
    /// The `sharelane:` format version.
    public var formatVersion: Int
    public var name: String
    public var description: String?
    /// `defaultContainer` unless the recipe names one.
    public var container: String
    public var environment: CloudKitEnvironment
    public var seed: UInt64
    /// The path the recipe was loaded from.
    public var file: String
    /// Variables after `vars`, `.env` files and overrides were merged.
    public var variables: [String: String]
    /// People, in the order the recipe declares them.
    public var users: [DeclaredUser]
    /// The handle of the user whose private database holds `zones`.
    public var owner: String
    public var zones: [DeclaredZone]
    /// Records of the public database (`public.records`), parents before children.
    public var publicRecords: [DeclaredRecord]
    /// The public records each `repeat:` made, by their name template.
    public var generatedPublicRecords: [GeneratedRecords] = []
    /// The record types, fields and indexes the recipe needs: `schema:` and what its records imply.
    public var schema = RecipeSchema()
    /// The subscriptions the recipe's users hold (`subscriptions:`), in the order the recipe declares them.
    public var subscriptions: [DeclaredSubscription] = []
    public var lanes: [Lane]
    /// Steps run before every lane run from the command line (`before_all`).
    public var beforeAll: [Step]
    /// Steps run after a lane succeeded (`after_all`).
    public var afterAll: [Step]
    /// Steps run after a lane failed (`error`).
    public var onError: [Step]
    /// Steps run before each lane, the one the command line runs and each one a `lane:` step calls
    /// (`before_each`).
    public var beforeEach: [Step] = []
    /// Steps run after each lane, whether it succeeded or failed (`after_each`).
    public var afterEach: [Step] = []
    /// The values a lane's commands and outside actions find in their environment under their own names (nil
    /// for a recipe not loaded from files).
    public var commandEnvironment: CommandEnvironment?
    /// What validation found worth saying that does not stop the recipe (a lane step acting on a zone the
    /// recipe does not declare); commands print them as `FILE:LINE:COLUMN: warning: …`.
    public var warnings: [RecipeError] = []

    public init(
        formatVersion: Int = 1, name: String, description: String? = nil,
        container: String = Recipe.defaultContainer, environment: CloudKitEnvironment = .development,
        seed: UInt64 = 0, file: String, variables: [String: String] = [:], users: [DeclaredUser], owner: String,
        zones: [DeclaredZone] = [], publicRecords: [DeclaredRecord] = [], lanes: [Lane] = [],
        beforeAll: [Step] = [], afterAll: [Step] = [], onError: [Step] = []
    ) {
        self.formatVersion = formatVersion
        self.name = name
        self.description = description
        self.container = container
        self.environment = environment
        self.seed = seed
        self.file = file
        self.variables = variables
        self.users = users
        self.owner = owner
        self.zones = zones
        self.publicRecords = publicRecords
        self.lanes = lanes
        self.beforeAll = beforeAll
        self.afterAll = afterAll
        self.onError = onError
    }

    /// The container of a recipe that names none: a local one, never Apple's.
    public static let defaultContainer = StoreWorld.defaultContainer

    /// The user with this handle.
    public func user(_ handle: String) -> DeclaredUser? { users.first { $0.handle == handle } }
    /// The users' handles by email address (`maya` for `maya.okafor@example.com`; the first, if two users share
    /// an address): what an export keeps, so that the state it writes still fits the recipe's lanes.
    public var handlesByEmail: [String: String] {
        Dictionary(users.map { ($0.email, $0.handle) }, uniquingKeysWith: { first, _ in first })
    }
    /// The zone with this name.
    public func zone(_ name: String) -> DeclaredZone? { zones.first { $0.name == name } }
    /// The lane with this name.
    public func lane(_ name: String) -> Lane? { lanes.first { $0.name == name } }

    /// The handle of the user whose private database holds `zone`: its `owner:`, else the recipe's.
    public func owner(of zone: DeclaredZone) -> String { zone.owner ?? owner }
    /// The handle of the user whose private database holds the zone of this name: the recipe's owner for a
    /// zone the recipe does not declare.
    public func owner(ofZone name: String) -> String { zone(name)?.owner ?? owner }
    /// The users who own zones: the recipe's owner first (who also holds the public records and the schema),
    /// then each other owner in the order of their first zone.
    public var owners: [String] {
        var owners = [owner]
        for zone in zones {
            if let other = zone.owner, !owners.contains(other) { owners.append(other) }
        }
        return owners
    }
    /// Whether some zone is owned by another user than the recipe's owner.
    public var hasSeveralOwners: Bool { zones.contains { $0.owner != nil } }
}

/// A person the recipe names by handle (`alice`).
public struct DeclaredUser: Sendable, Hashable, Codable {
    public var handle: String
    public var email: String
    public var name: String?
    public var location: SourceLocation
    /// `phone:`, in E.164 form (`+15551234567`); nil when the recipe gives none.
    public var phone: String?
    /// `discoverable:`; nil when the recipe does not say (a new user is not discoverable).
    public var discoverable: Bool?

    public init(
        handle: String, email: String, name: String? = nil, location: SourceLocation, phone: String? = nil,
        discoverable: Bool? = nil
    ) {
        self.handle = handle
        self.email = email
        self.name = name
        self.location = location
        self.phone = phone
        self.discoverable = discoverable
    }
}

/// What a recipe says about a zone's or a record's share.
public enum ShareDeclaration: Sendable, Hashable, Codable {
    /// `share: none`: stop sharing.
    case none
    case share(DeclaredShare)
}

/// A zone in its owner's private database.
public struct DeclaredZone: Sendable, Hashable, Codable {
    public var name: String
    /// The handle of the zone's owner when it is not the recipe's owner (`owner:`); nil for the recipe's
    /// owner, so that a recipe with one owner is the same whether its zones say so or not.
    public var owner: String?
    /// Where `owner:` was written.
    public var ownerLocation: SourceLocation?
    /// nil when the recipe has no `share:` key: any live share is left alone.
    public var share: ShareDeclaration?
    /// Every record of the zone, generated ones expanded, parents before children.
    public var records: [DeclaredRecord]
    /// `prune: true`: undeclared records and fields are deleted.
    public var prune: Bool
    /// `absent: true`: the zone is deleted.
    public var absent: Bool
    public var location: SourceLocation
    /// The records each `repeat:` made, by their name template.
    public var generated: [GeneratedRecords] = []

    public init(
        name: String, owner: String? = nil, share: ShareDeclaration? = nil, records: [DeclaredRecord] = [],
        prune: Bool = false, absent: Bool = false, location: SourceLocation
    ) {
        self.name = name
        self.owner = owner
        self.share = share
        self.records = records
        self.prune = prune
        self.absent = absent
        self.location = location
    }
}

/// A share as declared: a zone-wide one under a zone, or a hierarchy one under its root record.
public struct DeclaredShare: Sendable, Hashable, Codable {
    public var title: String?
    public var publicPermission: Permission
    /// The complete participant list: live participants not named here are removed.
    public var participants: [DeclaredParticipant]
    /// `stable_url: true`: the share's URL is derived from the recipe, the same on every machine (demo
    /// data), instead of random; anyone who knows the recipe can compute it.
    public var stableURL: Bool
    public var location: SourceLocation

    public init(
        title: String? = nil, publicPermission: Permission = .none, participants: [DeclaredParticipant] = [],
        stableURL: Bool = false, location: SourceLocation
    ) {
        self.title = title
        self.publicPermission = publicPermission
        self.participants = participants
        self.stableURL = stableURL
        self.location = location
    }
}

/// A participant of a declared share.
public struct DeclaredParticipant: Sendable, Hashable, Codable {
    /// The user's handle.
    public var handle: String
    public var permission: Permission
    /// `.privateUser` unless the recipe says `role: administrator`.
    public var role: ParticipantRole
    /// Whether the participant should have accepted (default true).
    public var accepted: Bool
    public var location: SourceLocation

    public init(
        handle: String, permission: Permission, role: ParticipantRole = .privateUser, accepted: Bool = true,
        location: SourceLocation
    ) {
        self.handle = handle
        self.permission = permission
        self.role = role
        self.accepted = accepted
        self.location = location
    }
}

/// A field value as declared; most are plain values, some are resolved against the store when applied.
public enum DeclaredValue: Sendable, Hashable, Codable {
    case value(FieldValue)
    /// `!share-url ZONE[/RECORD]`: the URL of that share, as a `STRING`.
    case shareURL(zone: String, record: String?)
}

/// The records one `repeat:` made, which plans show as one line (`+ 200 records Household/item-{001…200}`).
public struct GeneratedRecords: Sendable, Hashable, Codable {
    /// The name as written, placeholders and all: `item-{{i:03}}`.
    public var nameTemplate: String
    public var count: Int

    public init(nameTemplate: String, count: Int) {
        self.nameTemplate = nameTemplate
        self.count = count
    }
}

/// A record as declared.
public struct DeclaredRecord: Sendable, Hashable, Codable {
    public var name: String
    public var type: String
    public var fields: [String: DeclaredValue]
    /// The parent's record name (from `children:` nesting or an explicit `parent:`).
    public var parent: String?
    /// A share rooted at this record, `share: none`, or nil to leave any live share alone.
    public var share: ShareDeclaration?
    /// `absent: true`: the record is deleted.
    public var absent: Bool
    public var location: SourceLocation

    public init(
        name: String, type: String, fields: [String: DeclaredValue] = [:], parent: String? = nil,
        share: ShareDeclaration? = nil, absent: Bool = false, location: SourceLocation
    ) {
        self.name = name
        self.type = type
        self.fields = fields
        self.parent = parent
        self.share = share
        self.absent = absent
        self.location = location
    }
}

/// A named sequence of steps.
public struct Lane: Sendable, Hashable, Codable {
    public var name: String
    public var desc: String?
    /// `private: true`: callable only from other lanes.
    public var isPrivate: Bool
    /// `ci: true`: run by `sharelane test`; nil when the lane does not say.
    public var ci: Bool?
    public var steps: [Step]
    public var location: SourceLocation

    public init(name: String, desc: String? = nil, isPrivate: Bool = false, steps: [Step], location: SourceLocation) {
        self.name = name
        self.desc = desc
        self.isPrivate = isPrivate
        self.steps = steps
        self.location = location
    }
}

/// One step of a lane: an action, the user it runs as, and where the recipe wrote it.
public struct Step: Sendable, Hashable, Codable {
    public var action: Action
    /// `as: HANDLE`; nil means the recipe's owner.
    public var actor: String?
    public var location: SourceLocation
    /// `expect_error: CODE` on `accept`, `leave`, `save` and `delete`: the store must refuse the step with
    /// this CloudKit error code (and so change nothing); the step fails if it is allowed or refused otherwise.
    public var expectedError: ServerErrorCode?
    /// `environment: production` on `save`, `delete` and `query`: the step acts in that environment instead
    /// of the recipe's (a lane that deploys the schema, then shows what production refuses).
    public var environment: CloudKitEnvironment?
    /// `within: 10s` on `expect` and `query`: the check is tried again, with backoff, until it holds or this
    /// many seconds have passed (the last failure is the one reported). Queries on CloudKit are eventually
    /// consistent: an index lags behind the writes.
    public var within: Double?
    /// `database: public` on `expect`: the check reads the public database (its default zone) instead of the
    /// owner's zone, as the user sees it.
    public var database: DatabaseScope?
    /// `name:`: what reports call the step, instead of its words, so a test keeps its name when it is reworded.
    public var name: String?

    /// `undeclared: true`: the zone the step names is another recipe's or the app's, not this recipe's, so
    /// validation does not hold it to the recipe's `zones:`.
    public var zoneIsUndeclared = false
    /// Where each argument's value is written (`zone`, `record`, `as`, …), so that a message points at the
    /// mistyped word rather than at the step.
    public var argumentLocations: [String: SourceLocation] = [:]

    /// Where the value of `argument` is written, else where the step is.
    public func location(of argument: String) -> SourceLocation { argumentLocations[argument] ?? location }

    public init(action: Action, actor: String? = nil, location: SourceLocation, expectedError: ServerErrorCode? = nil) {
        self.action = action
        self.actor = actor
        self.location = location
        self.expectedError = expectedError
    }
}

/// What a step does.
public enum Action: Sendable, Hashable, Codable {
    case plan(prune: Bool, only: [String])
    case apply(prune: Bool, only: [String])
    /// Accept the zone-wide share of `zone`, or the hierarchy share rooted at `record`.
    case accept(zone: String, record: String?)
    /// Accept the share behind a URL, as a person who opened the link does (`accept: { url: "${link}" }`).
    case acceptURL(String)
    case leave(zone: String, record: String?)
    /// The owner takes a participant (a handle) off the share of `zone`, or the share rooted at `record`.
    case removeParticipant(zone: String, record: String?, participant: String)
    /// The owner gives a participant (a handle) of the share of `zone` (or rooted at `record`) another
    /// permission.
    case changePermission(zone: String, record: String?, participant: String, to: Permission)
    case save(zone: String, record: String, type: String, parent: String?, fields: [String: DeclaredValue])
    case delete(zone: String, record: String)
    case expect(Expectation)
    /// Writes the live state as a recipe to `out` (standard output when nil).
    case export(out: String?, zones: [String])
    /// Wipes a local store.
    case reset
    /// Calls another lane with parameters.
    case lane(name: String, parameters: [String: String])
    /// Queries records as a user, and checks what comes back.
    case query(QueryStep)
    /// Promotes development's schema to production (`sharelane schema deploy`).
    case deploySchema
    /// Saves a subscription as a user and starts receiving its notifications.
    case subscribe(SubscribeStep)
    /// `sh:` runs a command on this machine (only `sharelane run` runs it).
    case sh(ShellStep)
    /// A step whose name is not built in: the executable `sharelane-NAME` (only `sharelane run` runs it).
    case outside(OutsideAction)
}

/// `sh: "scripts/seed.sh ${env}"` or `sh: { run: [argv…], dir:, env: {…}, timeout:, allow_failure:,
/// register: }`, as fastlane's `sh`.
public struct ShellStep: Sendable, Hashable, Codable {
    /// What to run: a command line for `/bin/sh -c`, or the program and its arguments.
    public enum Command: Sendable, Hashable, Codable {
        case shell(String)
        case arguments([String])
    }

    public var command: Command
    /// The working directory, relative to the recipe's directory; the recipe's directory by default.
    public var directory: String?
    /// More environment variables for the command.
    public var environment: [String: String]
    /// Seconds the command may run before it is stopped and the step fails; nil: no limit.
    public var timeout: Double?
    /// A non-zero exit does not fail the lane.
    public var allowFailure: Bool
    /// `register: NAME`: the command's trimmed standard output, as `${NAME}` for later steps.
    public var register: String?

    public init(
        command: Command, directory: String? = nil, environment: [String: String] = [:], timeout: Double? = nil,
        allowFailure: Bool = false, register: String? = nil
    ) {
        self.command = command
        self.directory = directory
        self.environment = environment
        self.timeout = timeout
        self.allowFailure = allowFailure
        self.register = register
    }
}

/// A step that runs an action from outside: the executable `sharelane-NAME` on `PATH` or in the recipe's
/// `actions/` folder, as git finds its subcommands. It gets the step's parameters as JSON on standard input;
/// the JSON object it writes on standard output, if any, is its result.
public struct OutsideAction: Sendable, Hashable, Codable {
    public var name: String
    /// The step's parameters (`register` aside), as written.
    public var parameters: ActionValue
    /// `register: NAME`: the action's result, `${NAME}` (its JSON) and `${NAME.key}` (a member).
    public var register: String?

    public init(name: String, parameters: ActionValue, register: String? = nil) {
        self.name = name
        self.parameters = parameters
        self.register = register
    }
}

/// A value handed to an outside action, as JSON: what a recipe wrote, scalars typed as YAML types them.
public indirect enum ActionValue: Sendable, Hashable, Codable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null
    case list([ActionValue])
    case object([String: ActionValue])

    /// The value as a JSON object for `JSONSerialization`.
    public var jsonObject: Any {
        switch self {
        case .string(let text): text
        case .integer(let number): number
        case .number(let number): number
        case .bool(let flag): flag
        case .null: NSNull()
        case .list(let values): values.map(\.jsonObject)
        case .object(let members): members.mapValues(\.jsonObject)
        }
    }
}

/// What an `expect` step checks, without changing anything.
public enum Expectation: Sendable, Hashable, Codable {
    public enum Capability: String, Sendable, Hashable, Codable, CaseIterable {
        case read, write, delete, share
    }

    /// `can: read|write|delete|share` on a zone, or on a record in it; `to_be` true or false.
    case access(can: Capability, zone: String, record: String?, toBe: Bool)
    /// The number of records in the zone as the user sees it, share records not counted.
    case records(zone: String, count: Int)
    /// A field's value.
    case field(zone: String, record: String, name: String, equals: FieldValue)
    /// The user received a notification of this subscription since subscribing or the last such check.
    case notified(subscription: String, toBe: Bool)

    /// The zone the expectation reads; nil for a notification.
    public var zone: String? {
        switch self {
        case .access(_, let zone, _, _), .records(let zone, _), .field(let zone, _, _, _): zone
        case .notified: nil
        }
    }
}

/// The values of a recipe's `.env` files and `--var-file`s, which a lane's `sh:` commands and outside actions
/// find in their environment under their own names (`$API_HOST`), as fastlane puts dotenv files into `ENV`.
///
/// Never written out: such files may hold credentials, so a recipe encoded (a plan's cache file) carries
/// none of them, and a recipe decoded has none.
public struct CommandEnvironment: Sendable, Hashable, Codable {
    public var values: [String: String]

    public init(_ values: [String: String] = [:]) {
        self.values = values
    }

    public init(from decoder: any Decoder) throws {
        values = [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encodeNil()
    }
}
