// The server stack's own limit, for `Scripts/load.py`: a Hummingbird server on loopback that answers every
// POST with one stored response (the body of a file), as fast as the stack can. The load clients run the
// same requests against it and against `sharelane serve`; the ratio of their throughputs is how much of the
// stack's capacity the emulator's work leaves.
//
// Usage: sharelane-bench-baseline PORT RESPONSE-FILE
import Foundation
import Hummingbird

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]),
    let body = FileManager.default.contents(atPath: arguments[2])
else {
    FileHandle.standardError.write(Data("usage: sharelane-bench-baseline PORT RESPONSE-FILE\n".utf8))
    exit(1)
}
let router = Router()
let stored = ByteBuffer(bytes: body)
router.post("/**") { request, _ -> Response in
    // The request body is read, as the emulator reads it.
    _ = try await request.body.collect(upTo: 1 << 20)
    return Response(
        status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: stored))
}
let app = Application(
    router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
