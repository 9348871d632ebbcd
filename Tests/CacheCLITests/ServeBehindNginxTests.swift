import Foundation
import Testing

/// Real nginx (Debian's) in front of `cache serve`, configured as the README shows: its own
/// `$upstream_cache_status` says the headers make a standard cache behave.
@Suite(.waiting, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx is not installed (.ci/run installs it)"))
struct ServeBehindNginxTests {
    static let nginx = "/usr/sbin/nginx"

    /// A port free now (bound, then let go).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw TestFailure("no free port: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The README's nginx block, read from the README and run as printed (its listen port, the
    /// server's port and the cache's folder put in).
    static func readmeBlock(listen port: Int, server: Int, folder: String) throws -> String {
        let readme = Docs.manual
        let start = try #require(readme.range(of: "```nginx\n"))
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        let block = String(readme[start.upperBound..<end.lowerBound])
        #expect(!block.contains("proxy_buffering off;\n        add_header"), "buffering off in the cached location turns nginx's cache off")
        return block.replacingOccurrences(of: "listen 80;", with: "listen 127.0.0.1:\(port);")
            .replacingOccurrences(of: "127.0.0.1:8765", with: "127.0.0.1:\(server)")
            .replacingOccurrences(of: "/var/cache/nginx/cache", with: folder + "/cache")
    }

    @Test func theReadmesBlockCachesRevalidatesPassesEventsAndLimitsWhoMayReachIt() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ttl", "3s").status == 0)
        #expect(try await box.cache("sync", "jokes").status == 0)
        let server = try ServeProcess(box, ["--access-log"])
        let port = try Self.freePort()
        let folder = box.folder + "/nginx"
        try FileManager.default.createDirectory(atPath: folder + "/cache", withIntermediateDirectories: true)
        // As root, nginx's worker would be 'nobody', and the sandbox may be 0700: other tests
        // open databases meanwhile, and a new database narrows the process's umask while it is
        // made. So the worker runs as the user the test runs as.
        let configuration = """
            daemon off;
            \(getuid() == 0 ? "user root;" : "")
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(folder)/body;
                proxy_temp_path \(folder)/proxy;
                fastcgi_temp_path \(folder)/fastcgi;
                uwsgi_temp_path \(folder)/uwsgi;
                scgi_temp_path \(folder)/scgi;
            \(try Self.readmeBlock(listen: port, server: server.port, folder: folder))
            }
            """
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        let nginx = try RunningProcess(Self.nginx, ["-p", folder, "-c", folder + "/nginx.conf"], environment: [:])
        defer { kill(nginx.process.processIdentifier, SIGTERM); _ = nginx.wait() }
        try poll(seconds: 10) { (try? HTTPProbe.request(port: port, method: "GET", target: "/healthz")) != nil }

        let rows = "/sources/jokes/rows?limit=3"
        func status() throws -> (String, HTTPReply) {
            let reply = try HTTPProbe.request(port: port, method: "GET", target: rows)
            let log = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
            #expect(reply.status == 200, "\(reply.status) \(reply.text) \(server.stderrText.suffix(500)) \(log)")
            return (reply.headers["x-cache"] ?? "none", reply)
        }
        func stale(_ reply: HTTPReply) throws -> Bool { try reply.json()["stale"] as? Bool ?? false }
        // Synced again just before: starting nginx may have taken longer than the TTL on a
        // loaded machine. A copy served within the TTL says fresh; past it, it may say stale.
        #expect(try await box.cache("sync", "jokes").status == 0)
        let synced = ContinuousClock.now
        #expect(try status().0 == "MISS")
        let (hit, cached) = try status()
        let cachedStale = try stale(cached)
        #expect(hit == "HIT" && (!cachedStale || ContinuousClock.now - synced >= .seconds(3)), "\(hit) stale: \(cachedStale)")
        // Past the TTL (nginx counts whole seconds), within stale-while-revalidate: nginx answers
        // from its copy at once and revalidates behind it. The rows crossed their TTL since the
        // copy was made, so the revalidation gets the new body, never a 304 that would keep
        // "stale": false; the refresh that read started lands, and nginx hits again.
        try await Task.sleep(for: .seconds(5))
        let (late, _) = try status()
        #expect(["STALE", "UPDATING", "EXPIRED"].contains(late), "\(late)")
        try poll(seconds: 20) { try server.stderrText.contains("GET \(rows) 200") && upstreamRequests(upstream, "/jokes/ten").count >= 2 }
        #expect(!server.stderrText.contains("GET \(rows) 304"))
        try poll(seconds: 20) { try status().0 == "HIT" }

        // Upstream down: the rows go stale and stay so. A copy saying so is revalidated to 304
        // for as long as nothing changes.
        try upstream.control(["status": 500])
        try poll(seconds: 20) { let (_, reply) = try status(); return try stale(reply) }
        try poll(seconds: 20) { _ = try status(); return server.stderrText.contains("GET \(rows) 304") }

        // /events passes live; only GET is let through, and only from the addresses allowed.
        let events = try EventsClient(port: port)
        #expect(events.read(until: "retry: 2000", seconds: 5), "\(events.text)")
        #expect(try HTTPProbe.request(port: port, method: "POST", target: "/sources/jokes/refresh").status == 403)
        let socket = try HTTPProbe.connect(port: port, timeout: 5, from: "127.0.0.2")
        defer { close(socket) }
        try HTTPProbe.send(socket, Data("GET \(rows) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        #expect(String(decoding: HTTPProbe.readAll(socket), as: UTF8.self).hasPrefix("HTTP/1.1 403"))
    }
}
