/// What an operator is shown of a secret a setting carries: a database URL's password (its
/// userinfo's, RFC 3986 §3.2.1, or a `password` query parameter, as libpq reads both) becomes
/// `****`, so that check-config's output and the log can be pasted into a ticket. Pure.
enum Redaction {
    static let mask = "****"

    static func databaseUrl(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var redacted = String(url[..<scheme.upperBound])
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            redacted += authority[...colon] + mask + authority[at...]
        } else {
            redacted += authority
        }
        let tail = rest[authorityEnd...]
        guard let question = tail.firstIndex(of: "?") else { return redacted + tail }
        redacted += tail[...question]
        let parameters = tail[tail.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            parameter.lowercased().hasPrefix("password=") ? "password=" + mask : String(parameter)
        }
        return redacted + parameters.joined(separator: "&")
    }
}
