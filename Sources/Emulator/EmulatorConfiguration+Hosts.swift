import Foundation

// Which names a request may call this server by (its `Host` header). A page whose own name resolves to this
// machine (DNS rebinding) is same-origin with the emulator, so CORS never applies to it; the name in its
// `Host` header is what tells it apart. An IP address cannot be rebound, so the address the connection
// reached is always good; a name must be loopback's, `--host`'s, or one `--allow-host` gives.
extension EmulatorConfiguration {
    /// Whether a request that gave `authority` (its `Host` header, `name[:port]`) on a connection that reached
    /// `localAddress` (`127.0.0.1:8420`, from the socket) names this server. Any port: a forwarded port
    /// (a container's `-p 9000:8420`) changes the port, never the name.
    public func allowsHost(_ authority: String, localAddress: String?) -> Bool {
        guard let name = Self.hostName(of: authority) else { return false }
        if name == "localhost" || Self.isLoopback(ipAddress: name) { return true }
        if name == host.lowercased() || allowedHosts.contains(where: { $0.lowercased() == name }) { return true }
        if let localAddress, let local = Self.hostName(of: localAddress), local == name { return true }
        return false
    }

    /// The host name of an authority (`name[:port]`, `[v6][:port]`), lowercased and without the port; nil when
    /// it is not one (a user part, a path, an empty name or a port that is not a number).
    public static func hostName(of authority: String) -> String? {
        var text = Substring(authority.lowercased())
        var name: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            name = text[...close]
            text = text[text.index(after: close)...]
        } else {
            let colon = text.firstIndex(of: ":") ?? text.endIndex
            name = text[..<colon]
            text = text[colon...]
        }
        if !text.isEmpty {
            guard text.first == ":", text.count > 1, text.dropFirst().allSatisfy(\.isASCIIDigitCharacter) else {
                return nil
            }
        }
        guard hostNameProblem(String(name)) == nil else { return nil }
        return String(name)
    }

    /// Why `name` cannot be given to `serve --allow-host`: nil for a DNS name (letters, digits, `-`, `.`), an
    /// IPv4 address, or an IPv6 address in brackets.
    public static func hostNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "empty" }
        if name.hasPrefix("[") {
            let inner = name.dropFirst().dropLast()
            guard name.hasSuffix("]"), !inner.isEmpty,
                inner.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." })
            else { return "not an IPv6 address in brackets" }
            return nil
        }
        if name.contains(":") || name.contains("/") || name.contains("@") {
            return "a URL or an address with a port, not a host name"
        }
        guard name.count <= 253,
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }),
            !name.hasPrefix("."), !name.contains("..")
        else { return "not a host name (letters, digits, '-' and '.')" }
        return nil
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
