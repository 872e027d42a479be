/// How sharelane writes a `Double` in JSON, in one place: the wire bodies, the saved plan and the JSON plan
/// all ask it, so one number is the same text in each.
///
/// A finite double is its shortest text that reads back as the same double (`1.5`, `0.1`, `5e-324`,
/// `1e+20`), and a whole one keeps its `.0` (`3.0`, `-0.0`), so that a reader that keeps integers and other
/// numbers apart (a JSON plan's reader, a recording's) reads back a double, not an integer. JSON has no NaN
/// or infinity: where a format keeps them they are the strings `"NaN"`, `"Infinity"` and `"-Infinity"`,
/// and the wire, which has no such strings, never asks for them.
package enum JSONNumber {
    /// The text of a finite double; nil for NaN and the infinities.
    @inlinable
    package static func text(_ value: Double) -> String? {
        value.isFinite ? value.description : nil
    }

    /// A double as JSON text: its number, or for NaN and the infinities the JSON string that names it.
    package static func json(_ value: Double) -> String {
        text(value) ?? "\"\(nonFiniteName(value))\""
    }

    /// `NaN`, `Infinity` or `-Infinity`: the word a format that keeps them writes in a string.
    package static func nonFiniteName(_ value: Double) -> String {
        value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity"
    }

    /// The double a format's word for NaN or an infinity names; nil for any other text.
    package static func nonFinite(named word: String) -> Double? {
        switch word {
        case "NaN": .nan
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        default: nil
        }
    }
}
