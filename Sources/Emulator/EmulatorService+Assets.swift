import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import ShareKit

// Assets, as Apple's reference describes them: `assets/upload` hands out one upload URL per
// asset field; the client POSTs the bytes there and gets `{singleFile: {fileChecksum, receipt, size}}`,
// which it saves as the field's value in `records/modify`; reads answer `{downloadURL, fileChecksum, size}`,
// and the `downloadURL` (with Apple's `${f}` file name placeholder) answers the bytes. The bytes are the
// store's (`KeepsAssetBytes.saveAssetBytes`: the SQLite file), kept once per content under `fnv1a64:HEX`, which is
// also the `fileChecksum` serve hands out (Apple's algorithm is not documented).
extension EmulatorService {
    /// How long an upload URL is good for: 15 minutes, as Apple's.
    static let uploadLifetime: Duration = .seconds(15 * 60)

    /// Answers `assets/upload`: one upload URL per token, in order.
    func assetsUpload(body: Data, world: StoreWorld) async throws -> ByteBuffer {
        let request = try decode(UploadAssetsRequest.self, from: body)
        try checkLimit(request.tokens.count, "tokens")
        guard !request.tokens.isEmpty else {
            throw ShareError(.badRequest, "assets/upload needs at least one entry in tokens")
        }
        let base = WireAsset.downloadBase ?? "http://\(configuration.host):\(configuration.port)"
        var answers: [UploadAssetsResponse.Token] = []
        for token in request.tokens {
            guard !token.fieldName.isEmpty, !token.recordType.isEmpty else {
                throw ShareError(.badRequest, "every assets/upload token needs a recordType and a fieldName")
            }
            let ticket = await uploads.issue(
                now: configuration.clock.now(), lifetime: Self.uploadLifetime, world: world)
            answers.append(
                UploadAssetsResponse.Token(
                    recordName: token.recordName ?? UUID().uuidString.lowercased(), fieldName: token.fieldName,
                    url: "\(base)\(WireAsset.uploadPath)?ticket=\(ticket)"))
        }
        return try encode(UploadAssetsResponse(tokens: answers))
    }

    /// `POST /assets/upload?ticket=…`: the bytes of one asset. The URL is the only credential, as Apple's
    /// upload URLs are; each is good once, for 15 minutes. The ticket rides in the query, which request logs
    /// never write.
    func uploadAsset(_ request: Request, context: EmulatorRequestContext) async throws -> Response {
        var request = request
        let ticket = request.uri.queryParameters["ticket"].map(String.init) ?? ""
        let world: StoreWorld
        do {
            world = try await uploads.spend(ticket, now: configuration.clock.now())
        } catch AssetUploadTickets.Refusal.expired {
            throw ShareError(
                .notFound, "this upload URL expired (they are good for 15 minutes); ask assets/upload for a new one")
        } catch {
            throw ShareError(
                .notFound, "this upload URL is unknown or already used (each is good once); ask assets/upload again")
        }
        let limit = CloudKitLimits.assetBytes
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch {
            throw ShareError(
                .badRequest,
                "the asset is larger than CloudKit's limit of 50 MB an asset (\(limit) bytes), or was cut short")
        }
        let body = [UInt8](buffer.readableBytesView)
        let bytes = try MultipartFile.bytes(of: body, contentType: request.headers[.contentType]) ?? body
        // The bytes are kept by the world that asked for the upload URL, as its records will name them.
        try await takePendingResetPoint(world)
        let kept = try await worlds.store(for: world).assetKeeper().saveAssetBytes(bytes)
        let checksum = servedChecksum?(kept).fileChecksum ?? kept
        var singleFile = WireAsset(fileChecksum: checksum, size: bytes.count, receipt: Self.receipt(checksum))
        // Apple's answer carries the key the asset was encrypted with and a checksum of the reference; a client
        // saves them back as they came. The emulator keeps the bytes as sent, so both are stand-ins in Apple's
        // form (base64), taken back and not checked.
        singleFile.wrappingKey = SignInTickets.randomToken(bytes: 32, urlSafe: false)
        singleFile.referenceChecksum = Data(("ref:" + checksum).utf8).base64EncodedString()
        let answer = UploadedAssetResponse(singleFile: singleFile)
        return WireResponse.json(try encode(answer))
    }

    /// `GET /assets/download/{checksum}/{file name}?ckc=…&cke=…&e=…&s=…`: the bytes kept under the checksum
    /// in the world the URL was handed out in, whatever the file name (`${f}` as handed out, or the name a
    /// client put in its place), without credentials until it expires (`AssetDownloads`). A URL serve did not
    /// hand out, or handed out in another world, answers as a name that does not exist (404, the same words),
    /// so that a guessed URL tells nothing; one past its expiry answers `410 Gone`, as Apple's do.
    func downloadAsset(_ request: Request, context: EmulatorRequestContext) async throws -> Response {
        let given = context.parameters.get("checksum") ?? ""
        let notKept = ShareError(.notFound, "no asset \(given) is kept here", subject: given)
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
        guard let kept = keptChecksum(given), let grant = downloads.check(kept, query: query) else { throw notKept }
        guard case .granted(let world) = grant else {
            let expired = ShareError(
                .notFound,
                "this download URL expired (they are good for \(downloads.lifetimeText)); read the record again "
                    + "for a fresh one",
                subject: given)
            let body = (try? WireCoding.bodyEncoder().encode(WireError(expired, redirectURL: nil))) ?? Data()
            return WireResponse.json(body, status: .gone)
        }
        guard try worlds.worlds().contains(world),
            let bytes = try await (worlds.store(for: world) as? any KeepsAssetBytes)?.assetBytes(checksum: kept)
        else { throw notKept }
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// How this server spells a kept checksum in its answers: as Apple's look with `--opaque-checksums`
    /// (`OpaqueAssetChecksum`), else as kept.
    var servedChecksum: (@Sendable (String) -> (fileChecksum: String, path: String))? {
        guard configuration.opaqueChecksums else { return nil }
        return { kept in
            guard let opaque = OpaqueAssetChecksum.spell(kept) else { return (kept, kept) }
            return (opaque, OpaqueAssetChecksum.urlSafe(opaque))
        }
    }

    /// The kept checksum (`fnv1a64:HEX`) a client's checksum stands for: itself, or with `--opaque-checksums`
    /// the one an opaque checksum was spelled from; nil for one this server did not hand out.
    func keptChecksum(_ given: String) -> String? {
        if given.hasPrefix(AssetValue.checksumPrefix) { return given }
        return configuration.opaqueChecksums ? OpaqueAssetChecksum.read(given) : nil
    }

    /// The receipt of an upload: it names the content, which `records/modify` finds in the store.
    static func receipt(_ checksum: String) -> String { "serve-\(checksum)" }

    /// The operations with their assets as the store keeps them: a value saved from an upload (its
    /// `receipt`) or read back (a `downloadURL` with serve's checksum) becomes `#CHECKSUM;size=N`, once the
    /// bytes are found in the store. An operation whose asset names no kept bytes is left as sent and answered
    /// in `refused` by its index: the caller refuses it alone (a non-atomic batch, as the live service answers
    /// it) or the whole request (an atomic one).
    func keepingAssets(_ operations: [RecordOperation], store: any Store) async throws -> (
        operations: [RecordOperation], refused: [Int: ShareError]
    ) {
        var result = operations
        var refused: [Int: ShareError] = [:]
        for index in result.indices {
            guard case .record(var record) = result[index].item else { continue }
            var changed = false
            do {
                for (name, value) in record.fields {
                    let kept = try await keptAsset(value, store: store, field: name, record: record.recordName)
                    if kept != value {
                        record.fields[name] = kept
                        changed = true
                    }
                }
            } catch let refusal as ShareError {
                refused[index] = refusal
                continue
            }
            if changed { result[index].item = .record(record) }
        }
        return (result, refused)
    }

    /// A receipt that does not validate, as the live service words it; what was wrong and what to do is the
    /// console's insight (and the reason of an atomic request refused whole for it).
    static func badReceipt(_ detail: String, record: String) -> ShareError {
        ShareError(.badRequest, "bad upload receipt (did_not_validate)", subject: record, insight: detail)
    }

    private func keptAsset(_ value: FieldValue, store: any Store, field: String, record: String) async throws
        -> FieldValue
    {
        switch value {
        case .assetID(let text):
            guard var asset = AssetValue(text: text), asset.receipt != nil || asset.isDownloadURL else { return value }
            if let receipt = asset.receipt, receipt != Self.receipt(asset.checksum) {
                throw Self.badReceipt(
                    "field \(field) of record \(record): the receipt does not match the fileChecksum; save the "
                        + "singleFile dictionary the upload answered as it is",
                    record: record)
            }
            guard let kept = keptChecksum(asset.checksum),
                let bytes = try await (store as? any KeepsAssetBytes)?.assetBytes(checksum: kept)
            else {
                let detail =
                    "field \(field) of record \(record): no asset \(asset.checksum) was uploaded here; upload it "
                    + "through assets/upload first"
                if asset.receipt != nil { throw Self.badReceipt(detail, record: record) }
                throw ShareError(.badRequest, detail, subject: record)
            }
            asset = AssetValue(checksum: kept, size: bytes.count)
            return .assetID(asset.text)
        case .list(let type, let values) where type == .assetID:
            var kept: [FieldValue] = []
            for element in values {
                kept.append(try await keptAsset(element, store: store, field: field, record: record))
            }
            return .list(elementType: type, kept)
        default:
            return value
        }
    }

    /// `http://HOST:PORT` as the client named this server (its Host header, when plain), for the URLs it
    /// hands out.
    func baseURL(of request: Request) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        let given = request.head.authority ?? ""
        let host =
            !given.isEmpty && given.allSatisfy(allowed.contains) ? given : "\(configuration.host):\(configuration.port)"
        return "http://\(host)"
    }
}
