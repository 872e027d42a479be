import ShareKit
import Testing

@Suite("Display text")
struct DisplayTextTests {
    @Test("control characters, DEL, C1 and bidirectional overrides are escaped; other text is left as it is")
    func escapes() {
        #expect(DisplayText.escaped("Groceries – café 🍎") == "Groceries – café 🍎")
        #expect(DisplayText.escaped("a\u{1B}[2Jb") == "a\\u{1B}[2Jb")
        #expect(DisplayText.escaped("ok\rhidden") == "ok\\rhidden")
        #expect(DisplayText.escaped("one\ntwo\tthree") == "one\\ntwo\\tthree")
        #expect(DisplayText.escaped("one\ntwo", keepingNewlines: true) == "one\ntwo")
        #expect(DisplayText.escaped("x\u{7F}\u{9B}y") == "x\\u{7F}\\u{9B}y")
        #expect(DisplayText.escaped("abc\u{202E}fed") == "abc\\u{202E}fed")
        #expect(FieldValue.string("a\u{1B}b").displayString == "\"a\\u{1B}b\"")
    }
}
