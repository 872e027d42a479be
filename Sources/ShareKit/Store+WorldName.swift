extension Store {
    /// A store knows no container unless it says.
    public var container: String? { nil }

    /// The store as the lines that read it say it: its name, then its container and environment, as
    /// `sqlite:.sharelane/store.sqlite (iCloud.com.example.Lists, development)`: a store holds many worlds,
    /// and a plan, `show`, `access` or a lane reads one.
    public var worldName: String {
        // `cloudkit:CONTAINER/ENVIRONMENT` says it already.
        if let container, displayName.contains("\(container)/\(environment.rawValue)") { return displayName }
        return "\(displayName) (\(container.map { "\($0), " } ?? "")\(environment.rawValue))"
    }
}
