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

    @Test func nginxHitsWhileFreshServesStaleWhileUpdatingAndRevalidatesTo304() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ttl", "5s").status == 0)
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
                proxy_cache_path \(folder)/cache keys_zone=cache:1m;
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://127.0.0.1:\(server.port);
                        proxy_cache cache;
                        proxy_cache_revalidate on;
                        proxy_cache_use_stale updating error timeout;
                        proxy_cache_background_update on;
                        add_header X-Cache $upstream_cache_status always;
                    }
                }
            }
            """
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        let nginx = try RunningProcess(Self.nginx, ["-p", folder, "-c", folder + "/nginx.conf"], environment: [:])
        defer { kill(nginx.process.processIdentifier, SIGTERM); _ = nginx.wait() }
        try poll(seconds: 10) { (try? HTTPProbe.request(port: port, method: "GET", target: "/healthz")) != nil }

        func status() throws -> (String, HTTPReply) {
            let reply = try HTTPProbe.request(port: port, method: "GET", target: "/sources/jokes/rows?limit=3")
            let log = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
            #expect(reply.status == 200, "\(reply.status) \(reply.text) \(server.stderrText.suffix(500)) \(log)")
            return (reply.headers["x-cache"] ?? "none", reply)
        }
        #expect(try status().0 == "MISS")
        let (hit, cached) = try status()
        #expect(hit == "HIT")
        // Past the TTL (nginx counts whole seconds: 2 s more), within stale-while-revalidate's
        // 5 s: nginx answers from its copy at once and revalidates behind it.
        try await Task.sleep(for: .seconds(7))
        let (late, stale) = try status()
        #expect(["STALE", "UPDATING"].contains(late), "\(late): \(cached.headers) then \(stale.headers)")
        #expect(stale.body == cached.body)
        // Its revalidation carried our ETag, and cache serve answered it 304 (the rows had not
        // changed); the refresh that stale read started lands, and nginx hits again.
        try poll(seconds: 20) { server.stderrText.contains("GET /sources/jokes/rows 304") }
        try poll(seconds: 20) { try status().0 == "HIT" }
    }
}
