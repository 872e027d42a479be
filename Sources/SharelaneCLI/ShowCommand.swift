import ArgumentParser
import Foundation
import Logging
import ShareKit
import ShareStoreSQLite

/// `sharelane show`: the live store as a tree, as one user sees it.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the live store as a tree: zones, records, shares and participants.",
        discussion: """
            With --as, shows what that user sees: their private database, the zones others shared with them \
            and they accepted (shared database), and the public database. --as takes an email address \
            (bob@example.com) or a user record name (_7d1f…). Without --as, a local store shows every user's \
            private database, then the public database.
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .customLong("as"), help: "The user to show the store as: an email address or a user record name.")
    var user: String?

    @Option(help: "Show only this database: private, shared or public.")
    var database: DatabaseScope?

    @Option(help: "Show only the zone with this name.")
    var zone: String?

    func run() async throws {
        let logger = Logger(label: "sharelane.show") { StreamLogHandler.standardError(label: $0) }
        let store: any Store
        do {
            store = try storeOptions.open(logger: logger)
        } catch {
            throw CLIFailure("cannot open the store \(storeOptions.url): \(error)")
        }
        let renderer = StoreTreeRenderer(store: store, zoneFilter: zone)
        var lines: [String] = []
        if let user {
            let resolved = try await resolveUser(user, in: store)
            lines.append(
                "Store \(store.displayName), as \(resolved.email ?? resolved.recordName) (\(resolved.recordName))")
            for scope in database.map({ [$0] }) ?? DatabaseScope.allCases {
                lines += try await renderer.render(scope, as: resolved.recordName)
            }
        } else {
            guard let local = store as? SQLiteStore else {
                throw CLIFailure("\(store.displayName) cannot list its users: name one with --as EMAIL")
            }
            let users = try await local.allUsers()
            if users.isEmpty, try await renderer.isPublicEmpty() {
                print("The store \(store.displayName) is empty. Apply a recipe with `sharelane apply` to fill it.")
                return
            }
            lines.append("Store \(store.displayName): \(users.count) user\(users.count == 1 ? "" : "s")")
            let scopes = database.map { [$0] } ?? [.private, .public]
            for user in users where scopes.contains(.private) || scopes.contains(.shared) {
                lines.append("")
                lines.append(
                    "user \(user.email ?? user.recordName) (\(user.recordName))\(user.name.map { ", \($0)" } ?? "")")
                for scope in scopes where scope != .public {
                    lines += try await renderer.render(scope, as: user.recordName).map { "  " + $0 }
                }
            }
            if scopes.contains(.public), let anyone = users.first?.recordName {
                lines.append("")
                lines += try await renderer.render(.public, as: anyone)
            }
        }
        print(lines.joined(separator: "\n"))
    }

    private func resolveUser(_ text: String, in store: any Store) async throws -> User {
        if text.contains("@") {
            let found = try await store.lookupUsers(emails: [text], as: "")
            guard let user = found.first ?? nil else {
                throw CLIFailure("no user with the email address \(text) in \(store.displayName)")
            }
            return user
        }
        do {
            return try await store.currentUser(as: text)
        } catch {
            throw CLIFailure(
                "no user '\(text)' in \(store.displayName): --as takes an email address or a user record name (_…)")
        }
    }
}

extension DatabaseScope: ExpressibleByArgument {}

/// A command failure with a message for the user (no stack trace), exit code 1.
struct CLIFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
