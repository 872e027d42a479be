import ArgumentParser
import Foundation
import Logging
import ShareKit
import ShareStoreSQLite

/// Turns a store URL (`--store`, `SHARELANE_STORE`, or the default) into a `Store`.
///
/// | URL | store |
/// |---|---|
/// | `sqlite:PATH`, or a bare path | the embedded SQLite store in that file |
/// | (nothing) | `.sharelane/store.sqlite` in the working directory |
/// | `memory:` | the embedded store in memory |
/// | `http://HOST:PORT` | a running `sharelane serve` (not yet supported) |
/// | `cloudkit:` | Apple's CloudKit Web Services (not yet supported) |
public enum StoreLocator {
    /// The store file used when neither `--store` nor `SHARELANE_STORE` names one.
    public static let defaultPath = ".sharelane/store.sqlite"

    /// The environment variable that names the store when `--store` is not given.
    public static let environmentVariable = "SHARELANE_STORE"

    /// What a store URL names.
    public enum Location: Equatable, Sendable {
        case sqlite(path: String)
        case memory
        case http(URL)
        case cloudKit
    }

    /// The store URL in effect: the option, else the environment variable, else the default path.
    public static func effectiveURL(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let option, !option.isEmpty { return option }
        if let value = environment[environmentVariable], !value.isEmpty { return value }
        return "sqlite:" + defaultPath
    }

    /// Parses a store URL.
    /// - Throws: `StoreLocatorError.unknownScheme` for a scheme sharelane does not know.
    public static func location(of url: String) throws -> Location {
        if url == "memory:" || url == "memory" { return .memory }
        if url.hasPrefix("sqlite:") {
            var path = String(url.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else { throw StoreLocatorError.emptyPath(url) }
            return .sqlite(path: path)
        }
        if url.hasPrefix("http://") || url.hasPrefix("https://") {
            guard let parsed = URL(string: url), parsed.host != nil else { throw StoreLocatorError.badURL(url) }
            return .http(parsed)
        }
        if url == "cloudkit:" || url.hasPrefix("cloudkit:") { return .cloudKit }
        if let colon = url.firstIndex(of: ":"), !url.hasPrefix("/"), !url.hasPrefix("."),
            url[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }),
            url.distance(from: url.startIndex, to: colon) > 1
        {
            throw StoreLocatorError.unknownScheme(url)
        }
        return .sqlite(path: url)
    }

    /// Opens the store a URL names.
    /// - Throws: `StoreLocatorError` for a URL sharelane cannot use, `ShareError` when the store cannot open.
    public static func open(_ url: String, logger: Logger) throws -> any Store {
        switch try location(of: url) {
        case .sqlite(let path): return try SQLiteStore(path: path, logger: logger)
        case .memory: return try SQLiteStore.inMemory(logger: logger)
        case .http:
            // The wire engineer replaces this with the HTTP store.
            throw StoreLocatorError.notYetSupported(url, "the http: store (a running `sharelane serve`)")
        case .cloudKit:
            // The wire engineer replaces this with the CloudKit Web Services store.
            throw StoreLocatorError.notYetSupported(url, "the cloudkit: store (CloudKit Web Services)")
        }
    }
}

/// A store URL sharelane cannot use.
public enum StoreLocatorError: Error, CustomStringConvertible, Equatable {
    case unknownScheme(String)
    case emptyPath(String)
    case badURL(String)
    case notYetSupported(String, String)

    public var description: String {
        switch self {
        case .unknownScheme(let url):
            "unknown store '\(url)': use sqlite:PATH (or a bare path), memory:, http://HOST:PORT or cloudkit:"
        case .emptyPath(let url): "the store '\(url)' names no file: write sqlite:PATH, e.g. sqlite:.sharelane/store.sqlite"
        case .badURL(let url): "the store URL '\(url)' is not a valid http URL: write http://HOST:PORT"
        case .notYetSupported(let url, let what):
            "\(what) is not supported by this build yet ('\(url)'); use sqlite:PATH or memory: for now"
        }
    }
}
