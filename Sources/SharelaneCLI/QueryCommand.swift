import ArgumentParser
import Foundation
import Lanes
import Logging
import Recipe
import ShareKit

/// `sharelane query`: records of one type in one zone, as a user, with CloudKit's filters and sort keys.
struct QueryCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Query records as a user, with CloudKit's comparators, as an app would.",
        discussion: """
            The store answers as CloudKit does: a filter needs a QUERYABLE field (SORTABLE for LESS_THAN and the \
            like), a sort key a SORTABLE one, and production holds only what was deployed (see `sharelane \
            schema`). The database is the owner's private one for the owner, the shared one for anyone else, \
            unless --database says. The recipe (RECIPE, else Recipes/sharelane.yaml or sharelane.yaml) names \
            the users by handle and gives the container and environment. Reading changes nothing.
            """)

    static let examples = [
        "sharelane query --as bob --zone Fasts --type Fasting --filter 'endDate GREATER_THAN_OR_EQUALS 2024-05-02T00:00:00Z' --sort endDate",
        "sharelane query --zone Fasts --type Fasting --sort endDate:desc --format json",
    ]

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }
    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "The user who asks: a handle of the recipe, an email address or a user record name (default: the "
                + "recipe's owner).", valueName: "user"))
    var user: UserArgument?
    @Option(help: "private, shared or public (default: private for the owner, shared for others).")
    var database: String?
    @Option(help: ArgumentHelp("The zone (default: _defaultZone).", valueName: "name"))
    var zone: String = defaultZoneName
    @Option(name: .customLong("type"), help: ArgumentHelp("The record type.", valueName: "type"))
    var recordType: String
    @Option(
        name: .customLong("filter"),
        help: ArgumentHelp(
            "FIELD COMPARATOR VALUE, e.g. 'endDate LESS_THAN 2024-06-01T00:00:00Z' (repeatable).", valueName: "filter"))
    var filters: [String] = []
    @Option(name: .customLong("sort"), help: ArgumentHelp("FIELD or FIELD:desc (repeatable).", valueName: "field"))
    var sorts: [String] = []
    @Option(help: "At most this many records.")
    var limit: Int?
    @Option(help: "development or production (default: the recipe's).")
    var environment: CloudKitEnvironment?
    @Option(help: "text (default) or json.")
    var format: Format = .text
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.query")
        let loaded = try recipeSelection.load(try RecipeSelection.resolve(recipe), nothingDone: "")
        var query = RecordQuery(recordType: recordType, resultsLimit: limit)
        do {
            query.filters = try filters.map { (text) throws(SchemaLanguageProblem) in try QueryText.filter(text) }
            query.sort = try sorts.map { (text) throws(SchemaLanguageProblem) in try QueryText.sort(text) }
        } catch {
            throw CommandFailure.usage(error.message)
        }
        var scope: DatabaseScope?
        if let database {
            guard let parsed = DatabaseScope(rawValue: database) else {
                throw CommandFailure.usage("--database is private, shared or public, not '\(database)'")
            }
            scope = parsed
        }
        let step = QueryStep(database: scope, zone: zone, query: query, expect: nil)
        let store = try storeOptions.open(for: loaded, environment: environment, reading: true, logger: logger)
        let asking = try await (user ?? UserArgument(loaded.owner)).user(in: store, recipe: loaded)
        let actor = asking.recordName
        let owner = try await UserArgument(loaded.owner).user(in: store, recipe: loaded).recordName
        // The same words whichever way --as named the user: the recipe's handle where it has one.
        let handle =
            loaded.users.first { EmailAddress.normalized($0.email) == asking.email.map(EmailAddress.normalized) }?
            .handle ?? asking.email ?? actor
        let records: [Record]
        do {
            records = try await QueryRun(store: store).records(step, actor: actor, owner: owner)
        } catch let error as ShareError {
            throw CommandFailure.store("the store refused the query: \(error)")
        }
        let (scopeUsed, _) = QueryRun.place(step, actor: actor, owner: owner)
        switch format {
        case .json:
            Terminal.write(Self.json(records))
        case .text:
            Terminal.write(
                "\(records.count) \(recordType) record\(records.count == 1 ? "" : "s") in \(zone) "
                    + "(\(handle)'s \(scopeUsed.rawValue) database, \((environment ?? loaded.environment).rawValue))"
                    + (records.isEmpty ? "." : ":") + "\n")
            for record in records {
                let fields = record.fields.keys.sorted().compactMap { key in
                    record.fields[key].map { "\(key): \($0.displayString)" }
                }
                Terminal.write("  \(DisplayText.escaped(record.recordName))  \(fields.joined(separator: ", "))\n")
            }
        }
    }

    /// `{"records": [{"recordName", "recordType", "fields": {NAME: {"type", "value"}}}]}`, values as plans
    /// print them.
    static func json(_ records: [Record]) -> String {
        struct Field: Encodable {
            var type: String
            var value: String
        }
        struct Entry: Encodable {
            var recordName: String
            var recordType: String
            var fields: [String: Field]
        }
        struct Body: Encodable { var records: [Entry] }
        let body = Body(
            records: records.map { record in
                Entry(
                    recordName: record.recordName, recordType: record.recordType,
                    fields: record.fields.mapValues { Field(type: $0.type.rawValue, value: $0.displayString) })
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}") + "\n"
    }
}
