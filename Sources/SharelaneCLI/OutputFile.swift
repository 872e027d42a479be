import Foundation

/// Where a command's `--out` output goes, in one place for every command that takes the option (`schema
/// export`, `access`, `export`): the file, written whole, or standard output without the option.
enum OutputFile {
    /// Writes `text` to `path`, then says so on standard error in the words `written` gives for the path; to
    /// standard output when `path` is nil.
    /// - Throws: `CommandFailure` naming the file when it cannot be written.
    static func write(_ text: String, to path: String?, written: (String) -> String) throws {
        guard let path else { return Terminal.write(text) }
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw CommandFailure.input("cannot write \(path): \(error.localizedDescription)")
        }
        Terminal.printError(written(path))
    }
}
