import CloudKitWire
import Foundation
import Parity
import Synchronization
import Testing

/// What a replay knows of values and exchanges that differ between two runs by nature, met first in the
/// recordings of the conformance run and of the CloudKit JS sharing app: signed asset URLs, push tokens, a
/// notification's long poll.
struct ReplayValuesTests {
    typealias Exchange = RecordedExchange

    static func exchange(
        _ method: String, _ path: String, query: [Exchange.QueryItem] = [], answer: String
    ) -> (file: String, exchange: Exchange) {
        let request = Exchange.Request(method: method, path: path, query: query, headers: [:], body: .none)
        let response = Exchange.Response(status: 200, headers: [:], body: Exchange.Body(Data(answer.utf8)))
        return ("\(path).json", Exchange(request: request, response: response))
    }

    static func answer(_ text: String) -> Exchange.Response {
        Exchange.Response(status: 200, headers: [:], body: Exchange.Body(Data(text.utf8)))
    }

    static let lookup = "/database/1/iCloud.test/development/private/records/lookup"
    static let scope = ReplayScope(
        routes: WireOperation.requestPatterns.map { .init(method: $0.method.rawValue, pattern: $0.pattern) })

    static func download(_ signed: String) -> String {
        #"{"records":[{"recordName":"pic","fields":{"photo":{"value":{"downloadURL":"#
            + #""http://127.0.0.1:1/assets/download/fnv1a64:1234/${f}?ckc=c&\#(signed)"}}}}]}"#
    }

    @Test("an asset's URL signed a second apart in the recording and within one second in the replay is one URL")
    func signedURLsCorrespondWithoutTheirSignature() async throws {
        let recording = [
            Self.exchange("POST", Self.lookup, answer: Self.download("e=1700000000&s=recordedSignatureOne")),
            Self.exchange("POST", Self.lookup, answer: Self.download("e=1700000001&s=recordedSignatureTwo")),
        ]
        let report = try await Replayer(exchanges: recording, apiToken: "t", scope: Self.scope).run { _ in
            Self.answer(Self.download("e=1800000000&s=replayedSignature"))
        }
        #expect(report.succeeded, "\(report.text)")

        // Two assets stay two: the recording's two checksums met as one in the replay are a difference.
        var two = recording
        two[1] = Self.exchange(
            "POST", Self.lookup,
            answer: Self.download("e=1700000001&s=recordedSignatureTwo").replacingOccurrences(of: "1234", with: "5678"))
        let one = try await Replayer(exchanges: two, apiToken: "t", scope: Self.scope).run { _ in
            Self.answer(Self.download("e=1800000000&s=replayedSignature"))
        }
        #expect(one.exchanges.map(\.differences.count) == [0, 1], "\(one.text)")
    }

    @Test("a push token is carried to the long poll, which answers once a later request made its notification")
    func aLongPollAnswersAfterTheRequestThatNotifies() async throws {
        let recording = [
            Self.exchange(
                "POST", "/database/1/iCloud.test/development/private/tokens/create",
                answer: #"{"apnsEnvironment":"development","apnsToken":"recordedPushToken1"}"#),
            Self.exchange(
                "GET", "/webcourier/aps", query: [.init(name: "tok", value: "recordedPushToken1")],
                answer: #"{"aps":{},"ck":{"cid":"iCloud.test","nid":"recorded-nid","fet":{"sid":"s","zoid":"_alice"}}}"#
            ),
            Self.exchange(
                "POST", "/database/1/iCloud.test/development/private/records/modify", answer: #"{"records":[]}"#),
        ]
        let saved = Atomic(false)
        let tokens = Mutex<[String]>([])
        let report = try await Replayer(exchanges: recording, apiToken: "t", scope: Self.scope).run { request in
            switch request.path {
            case "/webcourier/aps":
                tokens.withLock { $0 += request.query.filter { $0.name == "tok" }.map(\.value) }
                // As serve's long poll: the notification arrives once the save is made, or nothing in time.
                for _ in 0..<200 where !saved.load(ordering: .acquiring) {
                    try await Task.sleep(for: .milliseconds(10))
                }
                guard saved.load(ordering: .acquiring) else {
                    return Exchange.Response(status: 200, headers: [:], body: .none)
                }
                return Self.answer(
                    #"{"aps":{},"ck":{"cid":"iCloud.test","nid":"replayed-nid","fet":{"sid":"s","zoid":"_bob"}}}"#)
            case let path where path.hasSuffix("/records/modify"):
                saved.store(true, ordering: .releasing)
                return Self.answer(#"{"records":[]}"#)
            default:
                return Self.answer(#"{"apnsEnvironment":"development","apnsToken":"replayedPushToken2"}"#)
            }
        }
        #expect(report.succeeded, "\(report.text)")
        #expect(report.exchanges.map(\.path) == recording.map(\.exchange.request.path), "in the recording's order")
        #expect(tokens.withLock { $0 } == ["replayedPushToken2"], "the replay's push token, not the recording's")
    }
}
