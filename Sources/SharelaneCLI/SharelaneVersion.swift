/// The version of sharelane: what `sharelane --version` prints, the tag of the release it is, and the newest
/// released section of CHANGELOG.md (a test compares the two). Change it here, and only here, when releasing.
public enum SharelaneVersion {
    /// The released version, as tagged (`0.1.0`).
    public static let current = "0.1.0"
}
