import FoundationEssentials

/// What makes a source's name and URL acceptable: one set of checks for `cache sources add` and
/// `set` and for apps (`Cache.addSource`), with the same messages.
package enum SourceRules {
    /// A refusal, worded as the command line words it.
    package struct Problem: Error, Equatable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// Why `name` cannot name a source, or nil.
    package static func nameProblem(_ name: String) -> String? {
        Source.isValidName(name) ? nil : "Invalid source name '\(name)': use letters, digits, '-', '_' and '.'."
    }

    /// `localhost`, 127.0.0.0/8 or ::1: an address that never leaves this machine.
    package static func isLoopback(_ host: String) -> Bool {
        let host = String(host.lowercased().drop { $0 == "[" }.reversed().drop { $0 == "]" }.reversed())
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// A source URL from its text, or why it cannot be one.
    package static func url(_ text: String, option: String = "--url") -> Result<URL, Problem> {
        guard let url = URL(string: text), url.scheme != nil else {
            return .failure(Problem(message: "Invalid value '\(text)' for '\(option)': expected an absolute URL such as https://host/path or file:///path."))
        }
        if let problem = urlProblem(url) { return .failure(Problem(message: "Invalid \(option): \(problem).")) }
        return .success(url)
    }

    /// Why a source URL cannot be used as given, or nil. Credentials in the URL are refused:
    /// they would sit in the database in plain text; --token-env and --header keep them out.
    package static func urlProblem(_ url: URL) -> String? {
        let scheme = url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else { return nil }
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "it cannot be read" }
        if parts.user != nil || parts.password != nil {
            return "credentials in the URL are not stored; pass a token with --token-env VAR or a --header"
        }
        if (parts.host ?? "").isEmpty { return "it has no host" }
        if let port = portText(url.absoluteString), !(Int(port).map { (1...65535).contains($0) } ?? false) {
            return "port \(port) is out of range (1-65535)"
        }
        return nil
    }

    /// The port as written in the URL's authority, if one is: read from the text, because a
    /// number too large for an integer parses as no port at all.
    package static func portText(_ url: String) -> String? {
        guard let start = url.firstRange(of: "://")?.upperBound else { return nil }
        var authority = url[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if let bracket = authority.lastIndex(of: "]") { authority = authority[authority.index(after: bracket)...] }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        let port = authority[authority.index(after: colon)...]
        return port.isEmpty ? nil : String(port)
    }
}
