import CloudKitWire
import Foundation
import Hummingbird
import ShareKit

// The `users/*` operations beyond `users/lookup/email`: who the caller is (`users/current`, `users/caller`),
// discovering users by email address, phone number or user record name, and the emulator's own
// `users/settings`, where a signed-in user sets their phone number and discoverability. Discoverability is
// the store's (`Store.discoverUsers`): a user who is not discoverable answers like one who does not exist.
extension EmulatorService {
    func currentUser(_ call: OperationCall) async throws -> ByteBuffer {
        // A server-to-server key acts as a user of its own, whom no store holds: its record name alone.
        if AccessRules.isServerKeyCaller(call.user) { return try encode(WireUser(User(recordName: call.user))) }
        return try encode(WireUser(try await call.store.currentUser(as: call.user)))
    }

    func lookupContacts(_ call: OperationCall) throws -> ByteBuffer {
        // The caller's address book's discoverable users: the emulator keeps no address books.
        if !call.body.isEmpty { _ = try decode(NoMembers.self, from: call.body) }
        return try encode(UsersResponse(users: []))
    }

    /// Answers `users/caller`, `users/discover`, `users/lookup/phone`, `users/lookup/id` and `users/settings`.
    func users(_ operation: WireOperation, store: any Store, body: Data, as user: UserRecordName) async throws
        -> ByteBuffer
    {
        switch operation {
        case .usersCaller:
            // A server-to-server key acts as a user of its own, whom no store holds: CloudKit JS asks who it is
            // when it sets up a key's container, and hears the key's record name alone.
            if AccessRules.isServerKeyCaller(user) {
                return try encode(WireUserIdentity(userRecordName: user, email: nil, name: nil))
            }
            let me = try await store.currentUser(as: user)
            return try encode(WireUserIdentity(userRecordName: me.recordName, email: me.email, name: me.name))
        case .usersDiscover:
            guard !body.isEmpty else {
                // Live: GET users/discover (the reference's "every discoverable user in the caller's address
                // book") answers 500 `{uuid, serverErrorCode}`, no reason; the emulator has no address book and
                // answers as the live service does. Why is for whoever runs serve (its request log).
                throw ShareError(
                    .internalError, "",
                    insight: "GET users/discover is not served (the live service answers 500): POST {lookupInfos: […]}")
            }
            let request = try decode(DiscoverUsersRequest.self, from: body)
            let lookups = try Self.lookups(request.lookupInfos, operation: operation)
            let identities = try await store.discoverUsers(lookups, as: user)
            return try encode(UserIdentitiesResponse(users: identities.map(WireUserIdentity.init)))
        case .usersLookupPhone, .usersLookupID:
            let request = try decode(LookupInfosRequest.self, from: body)
            let lookups = try Self.lookups(request.users, operation: operation)
            for lookup in lookups {
                switch (operation, lookup) {
                case (.usersLookupPhone, .phone), (.usersLookupID, .recordName): continue
                default:
                    throw ShareError(
                        .badRequest,
                        operation == .usersLookupPhone
                            ? "users/lookup/phone needs a phoneNumber in every entry"
                            : "users/lookup/id needs a userRecordName in every entry")
                }
            }
            let identities = try await store.discoverUsers(lookups, as: user)
            return try encode(UsersResponse(users: identities.map(WireUser.init)))
        case .usersSettings:
            guard !body.isEmpty else {
                // GET: the caller's settings as they are.
                return try encode(UserSettingsRequest(try await store.discoverability(as: user)))
            }
            let request = try decode(UserSettingsRequest.self, from: body)
            try await store.setDiscoverability(request.settings, as: user)
            return try encode(UserSettingsRequest(try await store.discoverability(as: user)))
        default:
            throw ShareError(.badRequest, "unknown operation \(operation)")
        }
    }

    private static func lookups(_ infos: [WireLookupInfo], operation: WireOperation) throws -> [UserLookup] {
        try CloudKitLimits.checkOperationCount(infos.count, of: "users")
        return try infos.enumerated().map { index, info in
            guard let lookup = info.lookup else {
                throw ShareError(
                    .badRequest,
                    "\(operation) entry \(index) has no emailAddress, phoneNumber or userRecordName")
            }
            return lookup
        }
    }
}
