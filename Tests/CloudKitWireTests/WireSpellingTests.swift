import CloudKitWire
import Foundation
import ShareKit
import Testing

@Suite struct WireSpellingTests {
    @Test func rolesAndStatusesReadBothWireSpellingsAndWriteWebServices() {
        #expect(WireSpelling.participantRole("PRIVATE_USER") == .privateUser)
        #expect(WireSpelling.participantRole("USER") == .privateUser)
        #expect(WireSpelling.participantType(.privateUser) == "USER")
        #expect(WireSpelling.acceptance("PENDING") == .pending)
        #expect(WireSpelling.acceptance("INVITED") == .pending)
        #expect(WireSpelling.acceptanceStatus(.pending) == "INVITED")
        #expect(WireSpelling.permission("READ_WRITE") == .readWrite)
        #expect(WireSpelling.permission(.readOnly) == "READ_ONLY")
    }

    @Test func recipeWordsAreNotWireWords() {
        #expect(WireSpelling.permission("read-only") == nil)
        #expect(WireSpelling.participantRole("administrator") == nil)
        #expect(WireSpelling.acceptance("pending") == nil)
    }

    @Test func aParticipantInRecipeWordsIsRefused() throws {
        let body =
            #"{"userIdentity":{"userRecordName":"_bob"},"type":"USER","permission":"read-only","acceptanceStatus":"INVITED"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(WireParticipant.self, from: Data(body.utf8)) }
        let wire =
            #"{"userIdentity":{"userRecordName":"_bob"},"type":"USER","permission":"READ_ONLY","acceptanceStatus":"INVITED"}"#
        #expect(try JSONDecoder().decode(WireParticipant.self, from: Data(wire.utf8)).permission == .readOnly)
    }

    @Test func errorCodesMapToCloudKitStatusesAndBack() {
        #expect(WireSpelling.httpStatus(.accessDenied) == 403)
        #expect(WireSpelling.httpStatus(.authenticationRequired) == 421)
        for code in ServerErrorCode.allCases where ![.atomicError, .exists, .zoneNotFound].contains(code) {
            #expect(WireSpelling.code(httpStatus: WireSpelling.httpStatus(code)) == code)
        }
        #expect(WireSpelling.code(httpStatus: 502) == .internalError)
    }
}
