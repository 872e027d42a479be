import Testing

@Test func moduleBuilds() {
    #expect(Bool(true))
}
