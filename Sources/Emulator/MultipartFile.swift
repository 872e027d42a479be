import Foundation
import ShareKit

/// The file of an asset upload sent as `multipart/form-data`, as several clients post the bytes to an
/// upload URL (one part, with a `filename`), where the reference's example posts them raw. The asset is the
/// file's bytes either way, never the envelope around them.
enum MultipartFile {
    /// The bytes of the upload's file: the first part with a `filename`, else its first part. nil when the
    /// body is not `multipart/form-data` (a raw upload).
    /// - Throws: `ShareError` (`BAD_REQUEST`) for a multipart body without a boundary or a complete part.
    static func bytes(of body: [UInt8], contentType: String?) throws -> [UInt8]? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        guard let boundary = boundary(in: contentType) else {
            throw ShareError(.badRequest, "a multipart/form-data upload needs a boundary in its Content-Type")
        }
        let delimiter = Array("--\(boundary)".utf8)
        let newline = Array("\r\n".utf8)
        let headerEnd = Array("\r\n\r\n".utf8)
        var parts: [(headers: String, content: ArraySlice<UInt8>)] = []
        guard var start = find(delimiter, in: body, from: 0) else {
            throw ShareError(.badRequest, "the multipart/form-data upload holds no part with its boundary")
        }
        while true {
            let afterDelimiter = start + delimiter.count
            // `--` after a delimiter closes the body.
            if body.count >= afterDelimiter + 2, body[afterDelimiter] == UInt8(ascii: "-"),
                body[afterDelimiter + 1] == UInt8(ascii: "-")
            {
                break
            }
            guard let headersStart = find(newline, in: body, from: afterDelimiter).map({ $0 + newline.count }),
                let headersEnd = find(headerEnd, in: body, from: headersStart - newline.count),
                let next = find(newline + delimiter, in: body, from: headersEnd + headerEnd.count)
            else { break }
            let headers = String(decoding: body[headersStart..<max(headersStart, headersEnd)], as: UTF8.self)
            parts.append((headers, body[(headersEnd + headerEnd.count)..<next]))
            start = next + newline.count
        }
        guard let file = parts.first(where: { $0.headers.lowercased().contains("filename=") }) ?? parts.first else {
            throw ShareError(.badRequest, "the multipart/form-data upload holds no complete part")
        }
        return Array(file.content)
    }

    /// The `boundary` parameter of a Content-Type, unquoted.
    private static func boundary(in contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value =
                pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2
                ? String(pair[1].dropFirst().dropLast()) : pair[1]
            return value.isEmpty ? nil : value
        }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, start >= 0, haystack.count >= needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
