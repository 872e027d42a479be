import ShareKit

/// A line a tool printed (an `sh:` step's command, an outside action), shown as it printed it: tabs as tabs,
/// colours kept for a terminal and removed elsewhere, never as `\u{1B}` escapes.
///
/// Only colour codes (`ESC [ … m`) reach a terminal: a sequence that moves the cursor, clears the screen or
/// sets the window's title would garble the lines around it, so it is removed, with every other control
/// character but the tab. Direction overrides stay escaped as `DisplayText` escapes them: they can make a
/// line read as something else.
public enum ToolText {
    /// The line for a terminal that shows colour: colour codes kept, and reset at the end when the line set
    /// one, so that no colour spills onto the next line.
    public static func forTerminal(_ line: String) -> String {
        cleaned(line, keepingColour: true)
    }

    /// The line without colour codes or other control characters (a log, a file, the JUnit report).
    public static func plain(_ line: String) -> String {
        cleaned(line, keepingColour: false)
    }

    private static func cleaned(_ line: String, keepingColour: Bool) -> String {
        // Fast path: most lines hold nothing to remove.
        guard line.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 })
        else { return line }
        let scalars = Array(line.unicodeScalars)
        var output = String.UnicodeScalarView()
        var coloured = false
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar.value {
            case 0x1B:
                let end = sequenceEnd(scalars, from: index)
                if keepingColour, isColour(scalars, from: index, to: end) {
                    output.append(contentsOf: scalars[index..<end])
                    coloured = true
                }
                index = end
                continue
            case 0x09:
                output.append(scalar)
            case 0x00..<0x20, 0x7F, 0x80..<0xA0:
                break
            case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C:
                output.append(contentsOf: DisplayText.escaped(String(scalar)).unicodeScalars)
            default:
                output.append(scalar)
            }
            index += 1
        }
        var text = String(output)
        if coloured { text += "\u{1B}[0m" }
        return text
    }

    /// The index after the escape sequence that starts at `start`: `ESC [ … FINAL` (CSI), `ESC ] … BEL` or
    /// `ESC ] … ESC \` (OSC), or `ESC` and one more character.
    private static func sequenceEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        var index = start + 1
        guard index < scalars.count else { return index }
        switch scalars[index] {
        case "[":
            index += 1
            // Parameters and intermediates, then one final byte in 0x40…0x7E.
            while index < scalars.count, (0x20...0x3F).contains(scalars[index].value) { index += 1 }
            return index < scalars.count && (0x40...0x7E).contains(scalars[index].value) ? index + 1 : index
        case "]":
            index += 1
            while index < scalars.count {
                if scalars[index].value == 0x07 { return index + 1 }
                if scalars[index].value == 0x1B {
                    return index + 1 < scalars.count && scalars[index + 1] == "\\" ? index + 2 : index + 1
                }
                index += 1
            }
            return index
        default:
            return index + 1
        }
    }

    /// Whether `scalars[start..<end]` is `ESC [ digits and semicolons m`: a colour or a text style.
    private static func isColour(_ scalars: [Unicode.Scalar], from start: Int, to end: Int) -> Bool {
        guard end - start >= 3, scalars[start + 1] == "[", scalars[end - 1] == "m" else { return false }
        return scalars[(start + 2)..<(end - 1)].allSatisfy { $0 == ";" || ("0"..."9").contains($0) }
    }
}
