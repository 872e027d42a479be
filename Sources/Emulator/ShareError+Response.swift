import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import ShareKit

// A refusal answers as CloudKit does: its HTTP status and a JSON body with `serverErrorCode` and `reason`
// (and `redirectURL` to sign in, for AUTHENTICATION_REQUIRED).
extension ShareError: HTTPResponseError {
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: WireSpelling.httpStatus(code)) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        RequestNotes.answered(self)
        // The address the connection reached, never the request's Host header, which the client writes.
        var redirectURL: String?
        if code == .authenticationRequired, let address = (context as? EmulatorRequestContext)?.localAddress {
            redirectURL = "http://\(address)\(WireSpelling.signInPath)"
        }
        let body =
            (try? WireCoding.bodyEncoder().encode(WireError(withoutMachinePaths, redirectURL: redirectURL))) ?? Data()
        return WireResponse.json(body, status: status)
    }

    /// The error as a client may see it: a failure's reason (`INTERNAL_ERROR`) names the files of this
    /// machine where it happened (`cannot open the store file /home/…/store.sqlite`), which say where the
    /// store and the user's home are; each absolute path is cut to its last part. The log keeps the whole
    /// reason for whoever runs serve (`RequestLogMiddleware`).
    var withoutMachinePaths: ShareError {
        guard code == .internalError else { return self }
        var answer = self
        answer.reason = Self.cuttingPaths(reason)
        answer.subject = subject.map(Self.cuttingPaths)
        return answer
    }

    /// `text` with each absolute path in it (a `/` at its start or after a space, quote, bracket, `:` or `=`,
    /// up to the next space or quote) cut to its last part: `sqlite:/tmp/a/store.sqlite` → `sqlite:store.sqlite`.
    static func cuttingPaths(_ text: String) -> String {
        let starts: Set<Character> = [" ", "\"", "'", "(", "[", ":", "=", "`", "\n", "\t"]
        let ends: Set<Character> = [" ", "\"", "'", ")", "]", "`", ",", ";", "\n", "\t"]
        var result = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let atStart = index == text.startIndex || starts.contains(text[text.index(before: index)])
            guard character == "/", atStart else {
                result.append(character)
                index = text.index(after: index)
                continue
            }
            var end = index
            while end < text.endIndex, !ends.contains(text[end]) { end = text.index(after: end) }
            var path = text[index..<end]
            // A sentence's `:` or `.` after the path is not part of it.
            var trailing = ""
            while let last = path.last, last == ":" || last == "." {
                trailing = String(last) + trailing
                path = path.dropLast()
            }
            let parts = path.split(separator: "/")
            result += (parts.last.map(String.init) ?? "") + trailing
            index = end
        }
        return result
    }

    /// Any error as the answer it gives: a `ShareError` as itself, anything else as `INTERNAL_ERROR`.
    static func answering(_ error: any Error) -> ShareError {
        (error as? ShareError) ?? ShareError(.internalError, "the emulator failed: \(error)")
    }
}

/// The emulator's JSON answers.
enum WireResponse {
    static func json(_ body: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=UTF-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    static func json(_ body: Data, status: HTTPResponse.Status = .ok) -> Response {
        json(ByteBuffer(bytes: body), status: status)
    }
}
