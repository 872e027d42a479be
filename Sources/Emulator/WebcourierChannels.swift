import ShareKit

/// The notification channels `tokens/create` opened, by token: whose they are and which container they
/// belong to, so that the webcourier long-poll (which carries only the token) answers for the right user.
/// Kept in memory: after a restart of `sharelane serve` a client creates a new token, as CloudKit JS does
/// when its long-poll ends with an error.
actor WebcourierChannels {
    struct Entry: Sendable {
        var channel: NotificationChannel
        var user: UserRecordName
        var container: String
        var environment: CloudKitEnvironment
    }

    private var entries: [String: Entry] = [:]

    func add(_ entry: Entry) {
        entries[entry.channel.apnsToken] = entry
    }

    func entry(_ token: String) -> Entry? {
        entries[token]
    }
}
