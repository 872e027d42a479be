import Foundation
import PlanModel

/// Writes a file of the plan cache whole: to a file of its own beside it, then renamed over it, so that a
/// reader sees the old file or the new one, never part of one. Unlike `Data.write(options: .atomic)`, it does
/// not wait for the disk (`fsync`): a cache file lost to a power cut reads as damaged, and a damaged file
/// only costs the next plan a fuller read, while waiting for the disk cost an apply of 10,000 records a
/// tenth of a second (one file per zone).
enum CacheFileWriting {
    /// Replaces `url` with `data`; false when it could not (the old file, if any, is left as it was).
    @discardableResult
    static func replace(_ url: URL, with data: Data) -> Bool {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(UUID().uuidString).partial")
        guard (try? data.write(to: temporary)) != nil else { return false }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            return false
        }
        return true
    }
}
