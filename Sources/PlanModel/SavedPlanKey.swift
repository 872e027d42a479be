import Crypto
import Foundation

/// The secret that signs a saved plan (`SHARELANE_PLAN_KEY`): `plan --out` writes the HMAC-SHA256 of the
/// file's content with it, and `apply FILE` refuses a file without a matching one, so that a plan edited
/// between its review and its apply, its digest recomputed, cannot apply.
///
/// The key is never written anywhere: not in the file, not in what the commands print.
public struct SavedPlanKey: Sendable {
    /// The environment variable that holds the key, a secret of the CI that plans and applies.
    public static let environmentVariable = "SHARELANE_PLAN_KEY"

    /// The fewest characters a key may have: 16 random characters are 64 bits or more.
    public static let minimumLength = 16

    let key: SymmetricKey

    /// The key of `secret`, its bytes as UTF-8.
    /// - Throws: `SavedPlanKey.TooShort` when it has fewer than `minimumLength` characters.
    public init(_ secret: String) throws {
        guard secret.count >= Self.minimumLength else { throw TooShort() }
        key = SymmetricKey(data: Data(secret.utf8))
    }

    /// A key shorter than `minimumLength`.
    public struct TooShort: Error, CustomStringConvertible {
        public var description: String {
            "\(SavedPlanKey.environmentVariable) is shorter than \(SavedPlanKey.minimumLength) characters: set it to a random secret, e.g. the output of `openssl rand -hex 32`"
        }
    }
}
