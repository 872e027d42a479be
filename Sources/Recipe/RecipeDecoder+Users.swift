import Foundation
import ShareKit

// Users: `users:`, each a handle with an email address, a name, a phone number and whether they are discoverable.
extension RecipeDecoder {
    func decodeUsers(_ node: RecipeNode?) -> [DeclaredUser] {
        guard let node, let userPairs = pairs(node, "`users`") else { return [] }
        var users: [DeclaredUser] = []
        var emails: [String: SourceLocation] = [:]
        for pair in userPairs {
            let errorsBefore = errors.count
            defer { if errors.count > errorsBefore { faultyUserHandles.insert(pair.key) } }
            guard Self.isHandle(pair.key) else {
                error("`\(pair.key)` is not a user handle; use letters, digits, `-`, `_` and `.`", pair.keyLocation)
                continue
            }
            var email: String? = nil
            var displayName: String? = nil
            var phone: String? = nil
            var discoverable: Bool? = nil
            switch pair.value.content {
            case .scalar:
                email = string(pair.value, "user `\(pair.key)`")
            case .mapping(let fields):
                checkKeys(fields, allowed: Self.userKeys, in: "user `\(pair.key)`")
                if let e = pair.value["email"] {
                    email = string(e, "`email`")
                } else {
                    error("user `\(pair.key)` needs an `email:`", pair.value.location)
                }
                displayName = pair.value["name"].flatMap { string($0, "`name`") }
                if let node = pair.value["phone"], let given = string(node, "`phone`") {
                    if let normalized = PhoneNumber.normalized(given) {
                        phone = normalized
                    } else {
                        error(
                            "`\(given)` is not a phone number in international form; write a `+`, the country code "
                                + "and the number, e.g. `phone: \"+15551234567\"`", node.location)
                    }
                }
                discoverable = pair.value["discoverable"].flatMap { bool($0, "`discoverable`") }
            case .sequence:
                error(
                    "user `\(pair.key)` must be a mapping such as `{ email: \(pair.key)@example.com }`",
                    pair.value.location)
            }
            guard let email else { continue }
            if let problem = EmailAddress.problem(email) {
                error("user `\(pair.key)`: \(problem)", pair.value["email"]?.location ?? pair.value.location)
            }
            let key = EmailAddress.normalized(email)
            if let first = emails[key] {
                error("email `\(email)` is already used by another user (at \(first))", pair.value.location)
            }
            emails[key] = pair.value.location
            users.append(
                DeclaredUser(
                    handle: pair.key, email: email, name: displayName, location: pair.keyLocation, phone: phone,
                    discoverable: discoverable))
        }
        return users
    }

    static func isHandle(_ s: String) -> Bool {
        !s.isEmpty
            && s.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0))
            }
    }
}
