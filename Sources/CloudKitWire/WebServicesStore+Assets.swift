import AsyncHTTPClient
import Foundation
import NIOCore
import ShareKit

// Assets: a record saved with a local file in an asset field (`!asset PATH`) has the file uploaded
// first, as Apple's reference says: `assets/upload` hands out one URL per field, the bytes are POSTed there,
// and the `{fileChecksum, receipt, size}` each answers is saved as the field's value.
extension WebServicesStore {
    /// The operations with every local file in an asset field (found in `files`) uploaded and replaced by its
    /// receipt.
    func uploadingAssets(
        _ operations: [RecordOperation], in zoneID: ZoneID, database: DatabaseScope, files: AssetFiles,
        as user: UserRecordName
    ) async throws -> [RecordOperation] {
        let files = try LocalAssetFile.find(in: operations, files: files, storeName: displayName)
        guard !files.isEmpty else { return operations }
        var result = operations
        for chunk in files.chunked(CloudKitLimits.operationsPerRequest) {
            let request = UploadAssetsRequest(
                zoneID: zoneID,
                tokens: chunk.map { .init(recordName: $0.recordName, recordType: $0.recordType, fieldName: $0.field) })
            let answer: UploadAssetsResponse = try await send(
                .assetsUpload, database: database, body: request, as: user)
            let tokens = try Self.inOrder(answer.tokens, count: chunk.count, what: .assetsUpload)
            for (file, token) in zip(chunk, tokens) {
                // The bytes sent are the bytes planned: a file changed since its plan is not uploaded.
                let bytes = try file.read()
                let digest = FNV1a64.checksum(of: bytes)
                let uploaded = try await upload(
                    bytes, to: token.url, what: file.path,
                    newURL: {
                        let again: UploadAssetsResponse = try await self.send(
                            .assetsUpload, database: database,
                            body: UploadAssetsRequest(
                                zoneID: zoneID,
                                tokens: [
                                    .init(
                                        recordName: file.recordName, recordType: file.recordType, fieldName: file.field)
                                ]),
                            as: user)
                        guard let url = again.tokens.first?.url else {
                            throw ShareError(.internalError, "assets/upload answered no URL for \(file.path)")
                        }
                        return url
                    })
                guard let checksum = uploaded.fileChecksum, let receipt = uploaded.receipt else {
                    throw ShareError(
                        .internalError, "the upload of \(file.path) answered without a fileChecksum or receipt")
                }
                // A checksum sharelane cannot compute (Apple's) is remembered with the digest of what went up,
                // so the next plan knows the live asset is this file.
                let content: String? = checksum == digest ? nil : digest
                if content != nil, !assetContents.remember([checksum: digest]) {
                    logger.notice(
                        "cannot write the file of known asset checksums; the next command downloads to compare")
                }
                file.replace(
                    with: .assetID(
                        AssetValue(
                            checksum: checksum, size: uploaded.size ?? bytes.count, receipt: receipt,
                            wrappingKey: uploaded.wrappingKey, referenceChecksum: uploaded.referenceChecksum,
                            content: content
                        ).text), in: &result)
            }
        }
        return result
    }

    /// The bytes of an asset read from this store (its `downloadURL`, with Apple's `${f}` file name
    /// placeholder replaced by `asset`); nil for a value with no download URL.
    /// - Throws: `ShareError` when the download fails, or its bytes do not have the digest sharelane knows
    ///   for them (`AssetValue.contentDigest`; an unknown Apple checksum is not checked, its algorithm is not
    ///   known).
    public func downloadAsset(_ asset: AssetValue) async throws -> [UInt8]? {
        guard asset.isDownloadURL else { return nil }
        let url = asset.location.replacingOccurrences(of: "${f}", with: "asset")
        let reply: Reply
        do {
            // A download changes nothing: sent again as any read is.
            reply = try await chains.transport.exchange(
                HTTPClientRequest(url: url), what: "the asset \(asset.checksum)", resendAfterLoss: true,
                timeout: .seconds(300))
        } catch {
            throw ShareError(.internalError, "cannot download the asset \(asset.checksum): \(error)")
        }
        guard (200..<300).contains(reply.status) else {
            throw ShareError(
                .notFound, "downloading the asset \(asset.checksum) answered HTTP \(reply.status)",
                subject: asset.checksum)
        }
        let bytes = [UInt8](reply.data)
        if let expected = asset.contentDigest ?? assetContents.content(of: asset.checksum),
            FNV1a64.checksum(of: bytes) != expected
        {
            throw ShareError(
                .internalError, "the asset downloaded for \(asset.checksum) has other bytes (\(bytes.count) bytes)")
        }
        return bytes
    }

    /// The records with each asset whose checksum sharelane cannot compute (Apple's `fileChecksum`) marked
    /// with the digest of its bytes (`AssetValue.content`), so plans compare it with a recipe's file: from
    /// what this client remembers (`assetContents`), else by downloading it once and remembering.
    /// An asset that cannot be downloaded stays unmarked (a plan then shows it as changed), with a notice.
    func knowingAssetContents(_ records: [Record]) async throws -> [Record] {
        var result = records
        var learned: [String: String] = [:]
        for index in result.indices where result[index].fields.values.contains(where: Self.hasUnmarkedAsset) {
            for (name, value) in result[index].fields {
                let marked = try await markingContent(value, learned: &learned)
                if marked != value { result[index].fields[name] = marked }
            }
        }
        if !learned.isEmpty, !assetContents.remember(learned) {
            logger.notice("cannot write the file of known asset checksums; the next command downloads to compare")
        }
        return result
    }

    func knowingAssetContents(_ outcomes: [RecordOutcome]) async throws -> [RecordOutcome] {
        guard
            outcomes.contains(where: {
                if case .saved(let record) = $0 {
                    record.fields.values.contains(where: Self.hasUnmarkedAsset)
                } else {
                    false
                }
            })
        else { return outcomes }
        var result = outcomes
        for index in result.indices {
            guard case .saved(let record) = result[index] else { continue }
            result[index] = .saved(try await knowingAssetContents([record])[0])
        }
        return result
    }

    /// Whether the value holds an asset with a checksum sharelane cannot compute and no known content.
    private static func hasUnmarkedAsset(_ value: FieldValue) -> Bool {
        switch value {
        case .assetID(let text):
            guard let asset = AssetValue(text: text) else { return false }
            return asset.contentDigest == nil && asset.isDownloadURL
        case .list(.assetID, let values):
            return values.contains(where: hasUnmarkedAsset)
        default:
            return false
        }
    }

    private func markingContent(_ value: FieldValue, learned: inout [String: String]) async throws -> FieldValue {
        switch value {
        case .assetID(let text):
            guard var asset = AssetValue(text: text), asset.contentDigest == nil, asset.isDownloadURL else {
                return value
            }
            if let known = learned[asset.checksum] ?? assetContents.content(of: asset.checksum) {
                asset.content = known
            } else {
                do {
                    guard let bytes = try await downloadAsset(asset) else { return value }
                    asset.content = FNV1a64.checksum(of: bytes)
                    learned[asset.checksum] = asset.content
                } catch let error as ShareError {
                    logger.notice(
                        "cannot download an asset to compare it by content; plans show it as changed",
                        metadata: ["checksum": "\(asset.checksum)", "reason": "\(error.reason)"])
                    return value
                }
            }
            return .assetID(asset.text)
        case .list(.assetID, let values):
            var marked: [FieldValue] = []
            for element in values { marked.append(try await markingContent(element, learned: &learned)) }
            return .list(elementType: .assetID, marked)
        default:
            return value
        }
    }

    /// POSTs the bytes to an upload URL (no tokens: the URL is the credential) and reads `singleFile`. An upload
    /// URL serves once, so after a connection lost once the bytes went out, the bytes go to a new URL
    /// (`newURL`); 503 and 429 are sent again to the same URL (nothing was taken). Every wait, the new URL's
    /// request included, is spent from the one budget of the request the asset is for (`RetryBudget`).
    private func upload(
        _ bytes: Data, to firstURL: String, what: String, newURL: () async throws -> String
    ) async throws -> WireAsset {
        try await RetryBudget.sharing(retryPolicy) { budget in
            try await upload(bytes, to: firstURL, what: what, budget: budget, newURL: newURL)
        }
    }

    private func upload(
        _ bytes: Data, to firstURL: String, what: String, budget: RetryBudget, newURL: () async throws -> String
    ) async throws -> WireAsset {
        var url = firstURL
        var lost = 0
        var reply: Reply
        while true {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.body = .bytes(ByteBuffer(bytes: bytes))
            do {
                reply = try await chains.transport.exchange(
                    request, what: "the upload of \(what)", resendAfterLoss: false, timeout: .seconds(300))
                break
            } catch let connection as LostConnection {
                lost += 1
                guard case (let wait, let attempt)? = budget.spend(retryAfter: nil) else {
                    throw ShareError(
                        .tryAgainLater,
                        "lost the connection uploading the asset \(what), \(lost) time\(lost == 1 ? "" : "s") "
                            + "(\(connection.reason)); check the network and run the command again")
                }
                chains.transport.announce(.connectionLost, wait: wait, attempt: attempt, path: "assets/upload")
                try await chains.transport.clock.sleep(wait)
                url = try await newURL()
            } catch {
                throw ShareError(.internalError, "cannot upload the asset \(what): \(error)")
            }
        }
        guard (200..<300).contains(reply.status) else {
            if reply.isRetryable {
                // Still refused for a moment when the request's retry budget ran out: the service's passing
                // refusal (an apply stops on the network, not on the upload), with how the retries ended.
                var error =
                    reply.wireError?.shareError(subject: nil)
                    ?? ShareError(WireSpelling.code(httpStatus: reply.status), "HTTP \(reply.status)")
                error.reason =
                    "the upload of the asset \(what): \(error.reason)" + (reply.gaveUp.map { "; \($0)" } ?? "")
                throw error
            }
            let reason =
                (try? JSONDecoder().decode(WireError.self, from: reply.data))?.reason ?? "HTTP \(reply.status)"
            throw ShareError(.badRequest, "the upload of the asset \(what) was refused: \(reason)")
        }
        do {
            return try JSONDecoder().decode(UploadedAssetResponse.self, from: reply.data).singleFile
        } catch {
            throw ShareError(.internalError, "the upload of the asset \(what) answered no singleFile dictionary")
        }
    }
}
