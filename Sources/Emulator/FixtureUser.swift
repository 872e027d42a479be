import CloudKitWire
import Foundation
import ShareKit

/// A person of a seeded recipe, by the handle the recipe gives them.
public struct FixtureUser: Sendable, Hashable, Codable {
    public var handle: String
    public var email: String
    public var name: String?

    public init(handle: String, email: String, name: String? = nil) {
        self.handle = handle
        self.email = email
        self.name = name
    }
}

/// A fixture user signed in: what a test needs to act as them.
public struct FixtureUserToken: Sendable, Hashable, Codable {
    public var handle: String
    public var emailAddress: String
    public var userRecordName: String
    public var name: String?
    /// A secret: hand it to the test, never print it.
    public var webAuthToken: String
}
