import FoundationEssentials

/// The proxy libcurl takes from the environment for a URL, found by curl's rules, so a failure
/// to reach it is said as such: "through the proxy …", not as if the upstream were down.
/// curl reads `http_proxy` in lowercase only; `https_proxy`, `all_proxy` and `no_proxy` in
/// either case, lowercase first.
struct ProxyChoice: Equatable {
    /// The proxy's URL as set, credentials removed.
    let proxy: String
    /// The variable it came from.
    let variable: String

    static func forURL(_ url: URL, environment: [String: String]) -> ProxyChoice? {
        let scheme = url.scheme?.lowercased() ?? ""
        let names = (scheme == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]) + ["all_proxy", "ALL_PROXY"]
        guard let variable = names.first(where: { !(environment[$0] ?? "").isEmpty }), let value = environment[variable] else { return nil }
        if bypasses(host: url.host ?? "", environment["no_proxy"] ?? environment["NO_PROXY"] ?? "") { return nil }
        return ProxyChoice(proxy: withoutCredentials(value), variable: variable)
    }

    /// `no_proxy`: `*`, or hosts and domains separated by commas; `example.com` and
    /// `.example.com` both cover the domain and its subdomains.
    static func bypasses(host: String, _ list: String) -> Bool {
        func bare(_ text: some StringProtocol) -> String { text.lowercased().filter { $0 != "[" && $0 != "]" } }
        let host = bare(host)
        for entry in list.split(separator: ",") {
            var name = bare(entry.trimmingSpaces())
            if name == "*" { return true }
            if name.hasPrefix(".") { name.removeFirst() }
            if !name.isEmpty && (host == name || host.hasSuffix("." + name)) { return true }
        }
        return false
    }

    private static func withoutCredentials(_ value: String) -> String {
        guard let at = value.lastIndex(of: "@") else { return value }
        let start = value.firstRange(of: "://")?.upperBound ?? value.startIndex
        return at > start ? String(value[..<start]) + String(value[value.index(after: at)...]) : value
    }
}
