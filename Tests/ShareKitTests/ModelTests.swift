import Testing
@testable import ShareKit

@Suite struct FieldValueTests {
    @Test func listTypesNameTheirElements() {
        #expect(FieldValue.list(elementType: .string, [.string("a")]).type == .stringList)
        #expect(FieldValue.list(elementType: .int64, []).type == .int64List)
        #expect(FieldType.referenceList.elementType == .reference)
        #expect(FieldType.stringList.listType == nil)
    }

    @Test func displayStringsAreReadable() {
        #expect(FieldValue.string("Milk").displayString == "\"Milk\"")
        #expect(FieldValue.timestamp(1_714_554_000_000).displayString == "2024-05-01T09:00:00.000Z")
        #expect(
            FieldValue.reference(Reference(recordName: "italy", action: .deleteSelf)).displayString
                == "ref(italy DELETE_SELF)")
    }
}

@Suite struct WordTests {
    @Test func recipeWordsParseAndWireWordsDoNot() {
        #expect(Permission(recipeName: "read-only") == .readOnly)
        #expect(Permission(recipeName: "READ_WRITE") == nil)
        #expect(Permission(recipeName: "write") == nil)
        #expect(ParticipantRole(recipeName: "administrator") == .administrator)
        #expect(ParticipantRole(recipeName: "USER") == nil)
        #expect(AcceptanceStatus(recipeName: "pending") == .pending)
        #expect(AcceptanceStatus(recipeName: "INVITED") == nil)
        #expect(AcceptanceStatus.pending.recipeName == "pending")
    }

    @Test func errorsPrintTheirCodeSubjectAndReason() {
        #expect(ShareError(.conflict, "stale tag", subject: "Z/r").description == "CONFLICT: Z/r: stale tag")
    }

    @Test func defaultOwnerResolvesToTheCaller() {
        let zone = ZoneID(zoneName: "Lists")
        #expect(zone.resolvingOwner(to: "_alice").ownerRecordName == "_alice")
        #expect(
            ZoneID(zoneName: "Lists", ownerRecordName: "_bob").resolvingOwner(to: "_alice").ownerRecordName == "_bob")
    }
}

@Suite struct PublicDatabaseRuleTests {
    @Test func onlyTheCreatorWritesAPublicRecord() {
        #expect(
            AccessRules.writePublicRecord(caller: "_alice", creator: "_alice", verb: "changes", subject: "card") == nil)
        let refused = AccessRules.writePublicRecord(caller: "_bob", creator: "_alice", verb: "deletes", subject: "card")
        #expect(refused?.code == .accessDenied)
        // The live service's words; the creator is named to the store's keeper only.
        #expect(refused?.reason == "Operation not permitted: only the creator of a public record deletes it")
        #expect(refused?.reason.contains("_alice") == false)
        #expect(refused?.insight == "only the creator of a public record (_alice) deletes it")
    }
}
