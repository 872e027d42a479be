import Foundation

/// The store a saved plan was made against, named by what identifies it rather than by the `--store` text
/// it was given: a plan made for `sqlite:st.sqlite` in one folder is not for another folder's file of that
/// name, nor for a copy of the file.
public struct SavedPlanStore: Codable, Hashable, Sendable {
    /// What kind of store it is.
    public enum Kind: String, Codable, Hashable, Sendable {
        case sqlite, memory, http, cloudkit
    }

    public var kind: Kind
    /// `sqlite`: the file's absolute path, its folders' symbolic links resolved.
    public var path: String?
    /// `sqlite`: the file's own identity on its file system (`DEVICE:INODE`), which a copy of the file, or
    /// another file put in its place, does not have and which writes to the file keep; nil when the file was
    /// not made yet.
    public var file: String?
    /// `http`: the serve's URL.
    public var url: String?
    /// `http`, `cloudkit`: the container and environment the plan addresses.
    public var container: String?
    public var environment: String?

    public init(
        kind: Kind, path: String? = nil, file: String? = nil, url: String? = nil, container: String? = nil,
        environment: String? = nil
    ) {
        self.kind = kind
        self.path = path
        self.file = file
        self.url = url
        self.container = container
        self.environment = environment
    }
}

// MARK: - CustomStringConvertible

extension SavedPlanStore: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .sqlite:
            "the SQLite file \(path ?? "(unnamed)") "
                + (file.map { "(file \($0) on its file system)" } ?? "(not made yet)")
        case .memory: "a store in memory"
        case .http:
            "the serve at \(url ?? "(unnamed)") (\(container ?? "its default container"), \(environment ?? "development"))"
        case .cloudkit:
            "CloudKit's container \(container ?? "(unnamed)") (\(environment ?? "development"))"
        }
    }
}
