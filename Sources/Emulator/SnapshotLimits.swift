import CloudKitWire
import Foundation
import ShareKit

/// How many named snapshots serve keeps and how many bytes they may hold together: each is a copy of its
/// worlds in memory, as large as their databases. Docs/Testing.md states them.
public struct SnapshotLimits: Sendable, Hashable {
    /// Named snapshots at most (a snapshot's worlds count as one).
    public var count: Int
    /// Bytes of every named snapshot's worlds together.
    public var bytes: Int

    /// 50 snapshots, 512 MB together: room for a suite's states of a few worlds each, and well under the
    /// memory of a CI machine.
    public static let standard = SnapshotLimits(count: 50, bytes: 512 << 20)

    public init(count: Int, bytes: Int) {
        self.count = count
        self.bytes = bytes
    }

    /// `1.2 MB`, `340 KB`, `512 MB`.
    static func text(_ bytes: Int) -> String {
        if bytes >= 1 << 20 {
            let tenths = (bytes * 10 + (1 << 19)) >> 20
            return tenths % 10 == 0 ? "\(tenths / 10) MB" : "\(tenths / 10).\(tenths % 10) MB"
        }
        return "\((bytes + 1023) / 1024) KB"
    }
}
