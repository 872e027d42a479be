import Foundation

/// The JSON settings every request and response body is written with.
public enum WireCoding {
    /// Sorted keys (stable bodies, so signatures and golden files are reproducible), unescaped slashes.
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty
            ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
