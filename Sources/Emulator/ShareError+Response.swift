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
        // The address the connection reached, never the request's Host header, which the client writes.
        var redirectURL: String?
        if code == .authenticationRequired, let address = (context as? EmulatorRequestContext)?.localAddress {
            redirectURL = "http://\(address)\(WireSpelling.signInPath)"
        }
        let body = (try? WireCoding.bodyEncoder().encode(WireError(self, redirectURL: redirectURL))) ?? Data()
        return WireResponse.json(body, status: status)
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
