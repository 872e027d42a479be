import Foundation

/// Lexical path helpers: recipes name files relative to themselves, and messages show paths as the user
/// gave them, never made absolute.
enum RecipePath {
    /// The directory part of `path` (`.` for a bare file name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `relative` resolved against `directory`, normalized (`a/./b/../c` → `a/c`).
    static func join(_ directory: String, _ relative: String) -> String {
        if relative.hasPrefix("/") { return normalize(relative) }
        if directory == "." || directory.isEmpty { return normalize(relative) }
        return normalize(directory + "/" + relative)
    }

    static func normalize(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
                continue
            }
            if part == "..", absolute { continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }

    /// `path` relative to `base` (both normalized, both relative or both absolute).
    static func relative(_ path: String, to base: String) -> String {
        let p = normalize(path).split(separator: "/").filter { $0 != "." }
        let b = normalize(base).split(separator: "/").filter { $0 != "." }
        var common = 0
        while common < p.count, common < b.count, p[common] == b[common], b[common] != ".." { common += 1 }
        let ups = Array(repeating: Substring(".."), count: b.count - common)
        let result = (ups + p[common...]).joined(separator: "/")
        return result.isEmpty ? "." : result
    }

    /// What is at `path` when it is there but is neither a regular file nor a directory (`a FIFO (named
    /// pipe)`, `a socket`, `a character device`, …); nil otherwise (callers say their own word about a
    /// directory or a missing file). Symbolic links are followed. It asks the file system only: opening a FIFO
    /// to read it waits for a writer, forever if none comes, so an `include:` or an `!asset` that names one
    /// is refused before it is opened.
    static func notRegularFile(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "not a regular file"
        }
    }

    /// A key for cycle detection: the real path with symbolic links resolved.
    static func identity(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
