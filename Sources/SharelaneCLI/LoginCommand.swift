import ArgumentParser
import CloudKitWire
import Foundation
import Logging
import Recipe
import ShareKit

/// `sharelane login`: obtains a web auth token for an `http:` or `cloudkit:` store and keeps it in the token
/// file (`TokenStore`), so that later commands need no sign-in and no token in the environment.
struct LoginCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to an http: or cloudkit: store and keep the web auth token for later commands.",
        discussion: """
            On http: (a `sharelane serve`) signs the user of --as or --email in directly. On cloudkit: asks the \
            service where to sign in (the redirectURL of AUTHENTICATION_REQUIRED), prints that URL, and waits \
            for the browser to come back to a one-shot callback server on 127.0.0.1 with the token (set the API \
            token's sign-in callback in CloudKit Console to that address, with a fixed --callback-port). The \
            callback takes only the answer that carries the random state of the URL it printed, once: a token \
            any other program sends it is refused and the wait goes on (so is a sign-in that comes back to a \
            callback without the state it was given: use --paste then). With \
            --paste, reads the token from standard input instead. The token (and the API token used) is kept \
            in a file only its owner can read: $SHARELANE_TOKEN_FILE, else $XDG_CONFIG_HOME/sharelane/tokens.json, \
            else ~/.config/sharelane/tokens.json, one entry per store, environment and user. Every command \
            using the store keeps the newest token there; `sharelane logout` removes it. Tokens are never \
            printed. See Docs/CloudKit.md.
            """)

    static let examples = [
        "sharelane login --store http://127.0.0.1:8420 --email alice@example.com",
        "sharelane login --store cloudkit:iCloud.com.example.App",
        "sharelane login --store cloudkit:iCloud.com.example.App/production --callback-port 8421",
    ]

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "Sign in as this user: a handle of the recipe (its email address) or an email address.", valueName: "user"))
    var user: UserArgument?

    @Option(help: "Sign in with this email address.")
    var email: String?

    @Option(
        name: .customLong("callback-port"),
        help: "cloudkit: the port of the callback server on 127.0.0.1 (0 picks a free one).")
    var callbackPort = 0

    @Flag(help: "cloudkit: paste the web auth token on standard input instead of waiting for the browser.")
    var paste = false

    @Option(
        name: .customLong("wait"),
        help: ArgumentHelp("cloudkit: how long to wait for the browser (default 5m).", valueName: "duration"))
    var wait: TimeLimit?

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    @OptionGroup var recipeSelection: RecipeSelection

    func validate() throws {
        if user != nil, email != nil { throw ValidationError("give --as or --email, not both") }
        guard (0...65535).contains(callbackPort) else {
            throw ValidationError("--callback-port \(callbackPort) is not a port: give 0…65535")
        }
    }

    func run() async throws {
        let logger = Logger(label: "sharelane.login")
        let loaded = try recipeSelection.loadIfAny(recipe)
        let url = storeOptions.url
        let address = try chosenEmail(recipe: loaded, url: url)
        let container = loaded?.container ?? Recipe.defaultContainer
        let environmentName = (loaded?.environment ?? .development).rawValue
        let variables = ProcessInfo.processInfo.environment
        let location: StoreLocator.Location
        let key: (store: String, environment: String, isCloudKit: Bool)
        do {
            location = try StoreLocator.location(of: url)
            guard
                let found = try StoreOptions.tokenKey(
                    url: url, container: container, environment: environmentName, variables: variables)
            else {
                throw CommandFailure.usage(
                    "\(url) is a local store: it needs no sign-in. `sharelane login` is for http: and cloudkit: stores")
            }
            key = found
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.store("cannot sign in to \(url): \(error)")
        }
        let file = TokenStore.standard
        let apiToken =
            storeOptions.apiToken ?? variables[Credentials.apiTokenVariable].flatMap { $0.isEmpty ? nil : $0 }
            ?? (try? file.find(store: key.store, environment: key.environment))?.apiToken
        SecretMask.register(apiToken)
        guard let apiToken else {
            throw CommandFailure.usage(
                "signing in to \(url) needs its API token: set CLOUDKIT_API_TOKEN or pass --api-token "
                    + (key.isCloudKit ? "(CloudKit Console → API Access)" : "(`sharelane serve` printed it)"))
        }
        let session: WebAuthSignIn.Session
        let endpoint: WebServicesEndpoint
        do {
            switch location {
            case .http:
                guard let address else {
                    throw CommandFailure.usage(
                        "signing in to \(url) needs a user: give --email ADDRESS, or --as HANDLE with a recipe")
                }
                var base = url
                while base.hasSuffix("/") { base.removeLast() }
                endpoint = .emulator(url: base, apiToken: apiToken, container: container, environment: environmentName)
                session = try await WebAuthSignIn(endpoint: endpoint, logger: logger).signIn(email: address)
            case .cloudKit(let named, let namedEnvironment):
                guard let chosen = named ?? (container == Recipe.defaultContainer ? nil : container) else {
                    throw StoreLocatorError.noContainer(url)
                }
                endpoint = WebServicesEndpoint(
                    kind: .cloudKit,
                    baseURL: variables["CLOUDKIT_BASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
                        ?? WebServicesEndpoint.appleBaseURL,
                    container: chosen, environment: namedEnvironment ?? environmentName, apiToken: apiToken)
                let signIn = WebAuthSignIn(endpoint: endpoint, logger: logger)
                let token = try await browserSignIn(signIn)
                SecretMask.register(token)
                session = try await signIn.session(token: token)
            case .sqlite, .memory:
                throw CommandFailure.usage("\(url) is a local store: it needs no sign-in")
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.store("cannot sign in to \(url): \(error)")
        }
        SecretMask.register(session.webAuthToken)
        try file.upsert(
            TokenStore.Entry(
                store: key.store, environment: key.environment, userRecordName: session.user.recordName,
                email: session.user.email ?? address, apiToken: apiToken, webAuthToken: session.webAuthToken,
                saved: Date()))
        let who = session.user.email.map { "\($0) (\(session.user.recordName))" } ?? session.user.recordName
        Terminal.write(
            "Signed in to \(endpoint)"
                + (endpoint.kind == .emulator ? " (\(endpoint.container), \(endpoint.environment))" : "")
                + " as \(who).\n"
                + "The web auth token is kept in \(file.path) (readable only by you); `sharelane logout` removes it.\n")
    }

    /// The email address of `--email`, or of the recipe's user `--as`.
    private func chosenEmail(recipe: Recipe?, url: String) throws -> String? {
        if let email { return email }
        guard let user else { return nil }
        if let address = user.email(in: recipe) { return address }
        // Signing in is by email address: a user record name (CloudKit's begin with `_`) names a user that
        // cannot sign in by it; anything else is a name nobody has.
        if user.text.hasPrefix("_") {
            throw CommandFailure.usage(
                "login signs in by email address, not by a user record name ('\(user)'): give --as the user's handle "
                    + "in the recipe or email address")
        }
        throw user.unknown(in: url, recipe: recipe)
    }

    /// The sign-in redirect: prints where to sign in, then waits for the browser at the callback (or reads
    /// the pasted token).
    private func browserSignIn(_ signIn: WebAuthSignIn) async throws -> String {
        let redirect = try await signIn.redirectURL()
        if paste {
            Terminal.write(
                "Open this URL in a browser and sign in:\n  \(redirect)\nThen paste the web auth token here: ")
            guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty
            else { throw CommandFailure.input("no web auth token was pasted; nothing was saved") }
            return line.removingPercentEncoding ?? line
        }
        let seconds = wait?.seconds ?? 300
        return try await LoginCallbackServer.receiveToken(
            port: callbackPort, timeout: seconds,
            ready: { callback in
                let separator = redirect.contains("?") ? "&" : "?"
                let url = redirect + separator + "callback=" + Self.percentEncoded(callback)
                Terminal.write(
                    "Open this URL in a browser and sign in:\n  \(url)\n"
                        + "Waiting up to \(Int(seconds)) s for the browser to return to "
                        + "\(callback.prefix { $0 != "?" }) (Ctrl-C stops; --paste to paste the token instead)…\n")
            },
            refused: { what in
                Terminal.printError("Refused \(what) at the sign-in callback: still waiting for the browser.")
            })
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// `sharelane logout`: forgets the web auth tokens `sharelane login` kept for a store.
struct LogoutCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Remove the web auth tokens `sharelane login` kept for a store.",
        discussion: """
            Removes the entries of the store and environment from the token file (only the user of --as or \
            --email when given); the file goes when it is empty.
            """)

    static let examples = [
        "sharelane logout --store cloudkit:iCloud.com.example.App",
        "sharelane logout --store http://127.0.0.1:8420 --email alice@example.com",
    ]

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "Only this user: a handle of the recipe, an email address or a user record name.", valueName: "user"))
    var user: UserArgument?

    @Option(help: "Only the user with this email address or user record name.")
    var email: String?

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    @OptionGroup var recipeSelection: RecipeSelection

    func run() async throws {
        let loaded = try recipeSelection.loadIfAny(recipe)
        // A name the recipe does not know is taken for a user record name, which the token file also keeps.
        try remove(user: user.map { $0.email(in: loaded) ?? $0.text } ?? email, recipe: loaded)
    }

    private func remove(user: String?, recipe: Recipe?) throws {
        let url = storeOptions.url
        let key: (store: String, environment: String, isCloudKit: Bool)?
        do {
            key = try StoreOptions.tokenKey(
                url: url, container: recipe?.container ?? Recipe.defaultContainer,
                environment: (recipe?.environment ?? .development).rawValue,
                variables: ProcessInfo.processInfo.environment)
        } catch {
            throw CommandFailure.store("cannot sign out of \(url): \(error)")
        }
        guard let key else { throw CommandFailure.usage("\(url) is a local store: there is no sign-in to remove") }
        let file = TokenStore.standard
        let removed = try file.remove(store: key.store, environment: key.environment, user: user)
        Terminal.write(
            removed == 0
                ? "No saved sign-in for \(key.store) (\(key.environment))\(user.map { " and \($0)" } ?? "").\n"
                : "Signed out: removed \(removed) saved token\(removed == 1 ? "" : "s") for \(key.store) "
                    + "(\(key.environment)) from \(file.path).\n")
    }
}
