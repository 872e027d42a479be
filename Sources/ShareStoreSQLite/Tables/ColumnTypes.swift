import GRDB
import ShareKit

// Enumerated columns are ShareKit's enums, stored as their raw values: SQL never spells a word such as
// 'ACCEPTED', and a row holding a word the enum does not know fails to decode, loudly, instead of falling
// back to a default (GRDB's "Record Recommended Practices").

extension DatabaseScope: DatabaseValueConvertible {}
extension ParticipantRole: DatabaseValueConvertible {}
extension Permission: DatabaseValueConvertible {}
extension AcceptanceStatus: DatabaseValueConvertible {}
extension CloudKitEnvironment: DatabaseValueConvertible {}
