import Foundation
import ShareKit

/// The files generated recipes name in `!asset` fields: three small files of different bytes in
/// `files/` beside the recipe, written once per test process in a directory of its own. Every generated
/// recipe is loaded as `check.yaml` in that directory, so `!asset files/NAME` finds them.
enum CheckAssets {
    static let folder = "files"
    static let names = ["apple.txt", "river.bin", "stone.txt"]

    /// The bytes of each file: text, binary, and text again, of different sizes.
    static func bytes(_ name: String) -> Data {
        switch name {
        case "apple.txt": Data("apple\n".utf8)
        case "river.bin": Data((0..<300).map { UInt8($0 % 251) })
        default: Data(String(repeating: "stone ", count: 40).utf8)
        }
    }

    /// The directory generated recipes are loaded from, with `files/` written in it.
    static let directory: URL = {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharelane-modelcheck-\(ProcessInfo.processInfo.processIdentifier)")
        write(into: directory)
        return directory
    }()

    /// Writes `files/` into `directory`, for a recipe file kept there.
    static func write(into directory: URL) {
        let files = directory.appendingPathComponent(folder)
        // Once per directory: every case of a run loads its recipes beside the same files.
        guard !FileManager.default.fileExists(atPath: files.appendingPathComponent(names[names.count - 1]).path)
        else { return }
        try? FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        for name in names { try? bytes(name).write(to: files.appendingPathComponent(name)) }
    }

    /// The path a generated recipe is loaded as.
    static var recipeFile: String { directory.appendingPathComponent("check.yaml").path }
}
