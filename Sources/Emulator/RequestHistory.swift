import CloudKitWire
import Foundation
import Synchronization
import ShareKit

/// The last requests clients made, for the console's Requests page, as the Firebase emulators' Requests tab
/// shows which rule decided each: what was asked, as whom, what was answered, and for each refusal the
/// store's reason (the access rule, and the share, participant and permission that decided it).
actor RequestHistory {
    /// One request.
    struct Entry: Sendable {
        var at: Date
        var method: String
        /// The path only: the query holds the tokens.
        var path: String
        var user: UserRecordName?
        var status: Int
        /// The refusals the answer carried: the request's own, or each refused item of a batch.
        var refusals: [Refusal]
    }

    /// A refusal: its code, its reason, and the item it was about (a record, a zone, a share URL).
    struct Refusal: Sendable {
        var code: String
        /// The store's whole reason: what the caller was told, or, where the caller may not know why (a zone
        /// or record answered as missing), what the store knows (`ShareError.insight`). The console's reader
        /// may see everything.
        var reason: String
        var subject: String?

        init(_ error: ShareError, subject: String?) {
            code = WireSpelling.errorCode(error.code)
            reason = error.insight ?? error.reason
            self.subject = subject
        }
    }

    /// Requests newest first; a few hundred are plenty for a page.
    static let limit = 500
    private var entries: [Entry] = []

    func record(_ entry: Entry) {
        entries.append(entry)
        if entries.count > Self.limit + 100 { entries.removeFirst(entries.count - Self.limit) }
    }

    /// The kept requests, newest first.
    func newestFirst() -> [Entry] { Array(entries.suffix(Self.limit).reversed()) }
}

/// The refusals of the items of one request (a batch's refused records), noted by the handlers while the
/// request runs, read by the request log when it is answered.
final class RequestNotes: Sendable {
    private let state = Mutex((refusals: [RequestHistory.Refusal](), answer: ShareError?.none))

    /// The notes of the request this task serves, where the request log set them.
    @TaskLocal static var current: RequestNotes?

    /// Notes an item's refusal.
    static func refused(_ error: ShareError, subject: String?) {
        guard let notes = current else { return }
        notes.state.withLock { state in
            if state.refusals.count < 50 {
                state.refusals.append(RequestHistory.Refusal(error, subject: subject))
            }
        }
    }

    /// Notes the refusal the whole request was answered with, where a middleware made it into the answer
    /// before the request log could see it thrown; the first one made stands.
    static func answered(_ error: ShareError) {
        guard let notes = current else { return }
        notes.state.withLock { state in if state.answer == nil { state.answer = error } }
    }

    var noted: [RequestHistory.Refusal] { state.withLock { $0.refusals } }
    /// The refusal the request was answered with (`answered`).
    var answered: ShareError? { state.withLock { $0.answer } }
}
