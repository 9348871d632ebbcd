import FoundationEssentials
import Synchronization

/// Browser sessions for a server with a token: `POST /session` with the bearer token sets a
/// cookie the browser sends by itself — `EventSource` cannot send an `Authorization` header, and
/// a token in a URL ends up in logs and history. The cookie is `HttpOnly` (no script reads it)
/// and `SameSite=Strict` (no other site's page sends it). Sessions live in memory: a restart
/// ends them, and the page posts the token again.
package final class Sessions: Sendable {
    static let cookie = "cache_session"
    /// The most sessions kept; past it, the oldest is dropped.
    static let most = 1000
    private let live = Mutex<[String]>([])

    /// A new session's id: 32 random bytes, hex.
    func open() -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<4).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
        live.withLock { ids in
            ids.append(id)
            if ids.count > Self.most { ids.removeFirst(ids.count - Self.most) }
        }
        return id
    }

    /// Whether the request's cookie names a live session.
    func admits(_ request: HTTPRequest) -> Bool {
        let ids = request.headers(named: "Cookie").flatMap { $0.split(separator: ";") }.compactMap { pair -> String? in
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
            return parts.count == 2 && parts[0] == Self.cookie ? String(parts[1]) : nil
        }
        guard !ids.isEmpty else { return false }
        return live.withLock { live in ids.contains { live.contains($0) } }
    }

    /// The `Set-Cookie` of a session.
    static func setCookie(_ id: String) -> String {
        "\(cookie)=\(id); Path=/; HttpOnly; SameSite=Strict"
    }
}

extension String {
    func leftPadded(to count: Int) -> String {
        String(repeating: "0", count: max(0, count - self.count)) + self
    }
}
