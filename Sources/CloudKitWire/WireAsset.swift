import ShareKit

/// An asset dictionary, as Apple's reference spells it ("Asset Dictionary"): a read answers
/// `{downloadURL, fileChecksum, size}`; an upload answers `{fileChecksum, receipt, size, wrappingKey?,
/// referenceChecksum?}`, which a `records/modify` saves as the field's value.
///
/// sharelane keeps an asset as the text of an `AssetValue` (`LOCATION#CHECKSUM;size=N;receipt=R`); this is
/// the one translation between that text and the dictionary.
package struct WireAsset: Codable, Sendable, Hashable {
    package var downloadURL: String?
    package var fileChecksum: String?
    package var size: Int?
    package var receipt: String?
    package var wrappingKey: String?
    package var referenceChecksum: String?

    package init(
        downloadURL: String? = nil, fileChecksum: String? = nil, size: Int? = nil, receipt: String? = nil
    ) {
        self.downloadURL = downloadURL
        self.fileChecksum = fileChecksum
        self.size = size
        self.receipt = receipt
    }

    /// How `sharelane serve` answers the assets it keeps while it answers a request.
    package struct Serving: Sendable {
        /// Where it serves the bytes of an asset kept under a checksum (`http://HOST:PORT`), so a kept asset
        /// is written with its `downloadURL`.
        package var downloadBase: String
        /// How it spells a kept checksum (`fnv1a64:HEX`): as the `fileChecksum`, and as it stands in the
        /// download URL's path. nil: as it is kept (`serve --opaque-checksums` sets one that the client
        /// cannot compute, as Apple's).
        package var checksum: (@Sendable (String) -> (fileChecksum: String, path: String))?
        /// What follows the download path of the asset kept under a checksum: the query that makes the URL
        /// good in the request's world until it expires (`?ckc=…&cke=…&e=…&s=…`, after `${f}` as in Apple's
        /// URLs); nil: none.
        package var grant: (@Sendable (String) -> String)?

        package init(
            downloadBase: String, checksum: (@Sendable (String) -> (fileChecksum: String, path: String))?,
            grant: (@Sendable (String) -> String)? = nil
        ) {
            self.downloadBase = downloadBase
            self.checksum = checksum
            self.grant = grant
        }
    }

    /// Set by `sharelane serve` while it answers a request; one task-local value, not two nested ones (the
    /// release build of two nested `withValue` over an optional closure crashed on every request under
    /// Swift 6.3.1, and each push is a per-request cost).
    @TaskLocal package static var serving: Serving?

    /// Where `sharelane serve` serves kept assets' bytes while it answers a request.
    package static var downloadBase: String? { serving?.downloadBase }

    /// How `sharelane serve` spells a kept checksum while it answers a request.
    package static var servedChecksum: (@Sendable (String) -> (fileChecksum: String, path: String))? {
        serving?.checksum
    }

    /// The path of a kept asset's bytes on `sharelane serve`; `${f}` is the file name placeholder of
    /// Apple's download URLs, which the client replaces with a file name of its choice.
    package static func downloadPath(checksum: String) -> String {
        "\(downloadPathPrefix)/\(checksum)/${f}"
    }

    /// `sharelane serve`'s download path, before the checksum.
    package static let downloadPathPrefix = "/assets/download"
    /// `sharelane serve`'s upload path; the one-time ticket goes in the query (`?ticket=…`).
    package static let uploadPath = "/assets/upload"

    /// The dictionary an `ASSETID` text is written as, or nil when it is written as plain text (a name with
    /// no checksum, or a local file that was not uploaded).
    package init?(assetIDText text: String) {
        guard let asset = AssetValue(text: text) else { return nil }
        if let receipt = asset.receipt {
            self.init(fileChecksum: asset.checksum, size: asset.size, receipt: receipt)
            wrappingKey = asset.wrappingKey
            referenceChecksum = asset.referenceChecksum
        } else if asset.isDownloadURL {
            self.init(downloadURL: asset.location, fileChecksum: asset.checksum, size: asset.size)
        } else if asset.location.isEmpty, let base = Self.downloadBase {
            let served = Self.servedChecksum?(asset.checksum) ?? (fileChecksum: asset.checksum, path: asset.checksum)
            let grant = Self.serving?.grant?(asset.checksum) ?? ""
            self.init(
                downloadURL: base + Self.downloadPath(checksum: served.path) + grant, fileChecksum: served.fileChecksum,
                size: asset.size)
        } else {
            return nil
        }
    }

    /// The `ASSETID` text of this dictionary: `DOWNLOADURL#CHECKSUM;size=N` for a read,
    /// `#CHECKSUM;size=N;receipt=R` for an upload; nil without a checksum (a `downloadURL` alone is kept as
    /// it is).
    package var assetIDText: String? {
        guard let fileChecksum else { return downloadURL }
        return AssetValue(
            location: downloadURL ?? "", checksum: fileChecksum, size: size, receipt: receipt,
            wrappingKey: wrappingKey, referenceChecksum: referenceChecksum
        ).text
    }
}
