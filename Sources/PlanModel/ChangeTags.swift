/// Change tags by record name, kept packed as one string (`name`, tab, `tag`, newline, …) until someone
/// reads them: a plan of 100,000 unchanged records takes their tags from its cache file into its basis, and
/// only a saved plan or the check of one reads them one by one.
package struct ChangeTags: Sendable {
    // Exactly one of the two is set.
    private var packed: String?
    private var unpacked: [String: String]?

    package init(_ tags: [String: String]) {
        unpacked = tags
    }

    /// Tags packed by `packed`; nil when the text is not such a packing.
    package init?(packed text: String) {
        guard text.isEmpty || text.hasSuffix("\n") else { return nil }
        packed = text
    }

    /// Sets the tags of `changed` and removes those of `deleted`, leaving the others packed.
    package mutating func update(changed: [String: String], deleted: Set<String>) {
        guard var text = packed else {
            var tags = unpacked ?? [:]
            for name in deleted { tags[name] = nil }
            for (name, tag) in changed { tags[name] = tag }
            unpacked = tags
            return
        }
        for name in deleted.union(changed.keys) {
            // The line is at the start, or after a newline.
            if text.hasPrefix(name + "\t"), let end = text.firstIndex(of: "\n") {
                text.removeSubrange(...end)
            } else if let start = text.range(of: "\n" + name + "\t"),
                let end = text[start.upperBound...].firstIndex(of: "\n")
            {
                text.removeSubrange(text.index(after: start.lowerBound)...end)
            }
        }
        guard let added = ChangeTags(changed).packedText else {
            var tags = dictionary
            for name in deleted { tags[name] = nil }
            for (name, tag) in changed { tags[name] = tag }
            self = ChangeTags(tags)
            return
        }
        packed = text + added
    }

    /// The tags, unpacked.
    package var dictionary: [String: String] {
        if let unpacked { return unpacked }
        var tags: [String: String] = [:]
        merge(into: &tags)
        return tags
    }

    /// Sets these tags in `tags`, over any it has. The packed lines are read as UTF-8 bytes: split into
    /// `Character`s, unpacking the tags an apply of 10,000 records wrote cost more than writing the cache file
    ///. The cuts are at ASCII bytes, so every part is whole UTF-8.
    package func merge(into tags: inout [String: String]) {
        guard var text = packed else {
            tags.merge(unpacked ?? [:]) { _, new in new }
            return
        }
        text.withUTF8 { bytes in
            var lineStart = 0
            var tab: Int?
            for index in bytes.indices {
                switch bytes[index] {
                case UInt8(ascii: "\t") where tab == nil:
                    tab = index
                case UInt8(ascii: "\n"):
                    if let tab {
                        tags[String(decoding: UnsafeBufferPointer(rebasing: bytes[lineStart..<tab]), as: UTF8.self)] =
                            String(decoding: UnsafeBufferPointer(rebasing: bytes[(tab + 1)..<index]), as: UTF8.self)
                    }
                    lineStart = index + 1
                    tab = nil
                default:
                    break
                }
            }
        }
    }

    /// The same tags, packed where they can be: a fraction of a dictionary's memory.
    package var packedWherePossible: ChangeTags {
        guard packed == nil, let text = packedText, let tags = ChangeTags(packed: text) else { return self }
        return tags
    }

    /// The tags packed; nil when a name or tag holds a tab or newline (and cannot be packed).
    package var packedText: String? {
        if let packed { return packed }
        var text = ""
        for (name, tag) in unpacked ?? [:] {
            if name.breaksTabbedLines || tag.breaksTabbedLines { return nil }
            text += name
            text += "\t"
            text += tag
            text += "\n"
        }
        return text
    }
}

extension String {
    /// Whether the text holds a tab, a newline or a carriage return (which joins a following newline into one
    /// character): it cannot stand as a part of the cache's tab-separated lines.
    package var breaksTabbedLines: Bool {
        utf8.contains { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    }
}
