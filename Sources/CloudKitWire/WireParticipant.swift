import ShareKit

/// A share participant on the wire.
///
/// `{participantId, userIdentity: {userRecordName, nameComponents, lookupInfo}, type, permission,
/// acceptanceStatus}`. `type` and `acceptanceStatus` are written in the Web Services spelling and read in
/// either (`WireSpelling`).
package struct WireParticipant: Sendable, Hashable {
    package var participantId: String?
    package var userIdentity: WireUserIdentity
    package var role: ParticipantRole
    package var permission: Permission
    package var acceptance: AcceptanceStatus

    package init(_ participant: Participant) {
        participantId = participant.participantID
        // One invited by email whose account is not known yet has no record name: CloudKit finds it.
        userIdentity = WireUserIdentity(
            userRecordName: participant.userRecordName.isEmpty ? nil : participant.userRecordName,
            email: participant.email, name: participant.name)
        if participant.email == nil, let phone = participant.phone {
            // Invited by phone number: CloudKit finds the user who has it.
            userIdentity.lookupInfo = WireLookupInfo(phoneNumber: phone)
        }
        role = participant.role
        permission = participant.permission
        acceptance = participant.acceptance
    }

    /// The owner of a share, as the `owner` member writes it.
    package init(
        participantId: String?, userIdentity: WireUserIdentity, role: ParticipantRole, permission: Permission,
        acceptance: AcceptanceStatus
    ) {
        self.participantId = participantId
        self.userIdentity = userIdentity
        self.role = role
        self.permission = permission
        self.acceptance = acceptance
    }

    /// A participant whose identity is whole, as the live service writes a share's owner: `userRecordName`,
    /// `nameComponents` (empty when no name is known) and `lookupInfo` (the address, else the record name).
    package init(identified participant: Participant) {
        self.init(participant)
        userIdentity.nameComponents = userIdentity.nameComponents ?? WireNameComponents(givenName: nil, familyName: nil)
        userIdentity.lookupInfo = userIdentity.lookupInfo ?? WireLookupInfo(userRecordName: participant.userRecordName)
    }

    package init(owner: UserRecordName) {
        self.init(Participant(userRecordName: owner, role: .owner, permission: .readWrite, acceptance: .accepted))
    }

    package var participant: Participant {
        Participant(
            participantID: participantId,
            userRecordName: userIdentity.userRecordName ?? userIdentity.lookupInfo?.userRecordName ?? "",
            email: userIdentity.lookupInfo?.emailAddress, name: userIdentity.nameComponents?.displayName,
            role: role, permission: permission, acceptance: acceptance, phone: userIdentity.lookupInfo?.phoneNumber)
    }
}

// MARK: - Codable

extension WireParticipant: Codable {
    private enum CodingKeys: String, CodingKey {
        case participantId, userIdentity, type, permission, acceptanceStatus
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        participantId = try container.decodeIfPresent(String.self, forKey: .participantId)
        userIdentity = try container.decode(WireUserIdentity.self, forKey: .userIdentity)
        let type = try container.decodeIfPresent(String.self, forKey: .type) ?? "USER"
        guard let role = WireSpelling.participantRole(type) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription:
                    "unknown participant type \"\(type)\"; expected OWNER, ADMINISTRATOR, USER or PUBLIC_USER")
        }
        self.role = role
        let permission = try container.decodeIfPresent(String.self, forKey: .permission) ?? "READ_ONLY"
        guard let parsed = WireSpelling.permission(permission) else {
            throw DecodingError.dataCorruptedError(
                forKey: .permission, in: container,
                debugDescription: "unknown permission \"\(permission)\"; expected NONE, READ_ONLY or READ_WRITE")
        }
        self.permission = parsed
        let status = try container.decodeIfPresent(String.self, forKey: .acceptanceStatus) ?? "INVITED"
        guard let acceptance = WireSpelling.requestedAcceptance(status) else {
            throw DecodingError.dataCorruptedError(
                forKey: .acceptanceStatus, in: container,
                debugDescription: "unknown acceptance status \"\(status)\"; expected one of "
                    + WireSpelling.documentedAcceptanceStatuses.joined(separator: ", "))
        }
        self.acceptance = acceptance
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(participantId, forKey: .participantId)
        try container.encode(userIdentity, forKey: .userIdentity)
        try container.encode(WireSpelling.participantType(role), forKey: .type)
        try container.encode(WireSpelling.permission(permission), forKey: .permission)
        try container.encode(WireSpelling.acceptanceStatus(acceptance), forKey: .acceptanceStatus)
    }
}

/// A user identity on the wire: `{userRecordName, nameComponents, lookupInfo}`.
package struct WireUserIdentity: Codable, Sendable, Hashable {
    package var userRecordName: String?
    package var nameComponents: WireNameComponents?
    package var lookupInfo: WireLookupInfo?

    package init(userRecordName: String?, email: String?, name: String?) {
        self.userRecordName = userRecordName
        nameComponents = name.map(WireNameComponents.init(displayName:))
        lookupInfo = email.map { WireLookupInfo(emailAddress: $0) }
    }
}

/// `{givenName, familyName}`; sharelane keeps a display name and splits it at its first space.
package struct WireNameComponents: Codable, Sendable, Hashable {
    package var givenName: String?
    package var familyName: String?

    package init(givenName: String?, familyName: String?) {
        self.givenName = givenName
        self.familyName = familyName
    }

    package init(displayName: String) {
        if let space = displayName.firstIndex(of: " ") {
            givenName = String(displayName[..<space])
            familyName = String(displayName[displayName.index(after: space)...])
        } else {
            givenName = displayName
            familyName = nil
        }
    }

    package var displayName: String? {
        let parts = [givenName, familyName].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }
}

/// How a user is looked up: `{emailAddress | phoneNumber | userRecordName}`.
package struct WireLookupInfo: Codable, Sendable, Hashable {
    package var emailAddress: String?
    package var phoneNumber: String?
    package var userRecordName: String?

    package init(emailAddress: String? = nil, phoneNumber: String? = nil, userRecordName: String? = nil) {
        self.emailAddress = emailAddress
        self.phoneNumber = phoneNumber
        self.userRecordName = userRecordName
    }
}
