import Foundation
import Testing
@testable import OfflineCache

/// The `cache` side of the https helper, against stand-ins for `cache-https` at the process
/// seam: small Python programs that read the request on stdin and answer in frames. (The real
/// helper, and a real failed TLS handshake, are in CacheCLITests' FaultTests.)
@Suite struct HTTPSHelperTests {
    final class FakeHelper {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("helper-\(UUID().uuidString)").path
        var program: String { folder + "/cache-https" }
        var receivedRequest: String { folder + "/request.json" }

        /// A helper whose answer is `answer`, Python statements that may call frame(kind, bytes).
        init(_ answer: String) throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let script = """
                #!/usr/bin/env python3
                import json, struct, sys, time
                request = sys.stdin.read()
                open(\(Self.pythonString(receivedRequest)), "w").write(request)
                def frame(kind, payload=b""):
                    sys.stdout.buffer.write(kind + struct.pack(">I", len(payload)) + payload)
                    sys.stdout.buffer.flush()
                def head(status, headers={}, length=-1):
                    frame(b"H", json.dumps({"status": status, "headers": headers, "expectedLength": length}).encode())
                \(answer)
                """
            // Written through a close-on-exec descriptor: a process that other tests start at
            // this moment must not inherit it, or running the script fails ("Text file busy")
            // for as long as that process lives.
            let fd = open(program, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
            guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
            let bytes = Array(script.utf8)
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            close(fd)
            guard written == bytes.count else { throw CocoaError(.fileWriteUnknown) }
        }

        deinit { try? FileManager.default.removeItem(atPath: folder) }

        static func pythonString(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "\\'") + "'" }

        func fetch(timeout: Double = 10, maxBytes: Int = 1 << 20, onBytes: (@Sendable (Int, Int?) -> Void)? = nil) throws(UpstreamError) -> FetchResponse {
            var request = FetchRequest(url: URL(string: "https://bank.example/account?key=secret")!,
                                       headers: [Source.Header(name: "Authorization", value: "Bearer canary-token")],
                                       timeout: timeout, maxBytes: maxBytes)
            request.etag = "\"v0\""
            request.onBytes = onBytes
            return try Fetcher(httpsHelper: program).fetch(request)
        }
    }

    final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [Int] = []
        func record(_ count: Int) { lock.withLock { counts.append(count) } }
        var last: Int? { lock.withLock { counts.last } }
    }

    @Test func theAnswerArrivesInFramesAndTheRequestGoesOnStdin() throws {
        let helper = try FakeHelper("""
            head(200, {"etag": '"v1"'}, 11)
            frame(b"B", b"[1, 2,")
            frame(b"B", b" 3]  ")
            frame(b"D")
            """)
        let progress = Progress()
        let response = try helper.fetch(onBytes: { count, _ in progress.record(count) })
        #expect(response.status == 200)
        #expect(response.body == Data("[1, 2, 3]  ".utf8))
        #expect(response.etag == "\"v1\"")
        #expect(progress.last == 11)

        let sent = try JSONDecoder().decode(HTTPSWire.Request.self, from: Data(contentsOf: URL(fileURLWithPath: helper.receivedRequest)))
        #expect(sent.url == "https://bank.example/account?key=secret")
        #expect(sent.headers == [["Authorization", "Bearer canary-token"]])
        #expect(sent.etag == "\"v0\"" && sent.maxBytes == 1 << 20 && sent.timeout == 10)
    }

    @Test func aFailingStatusKeepsItsRetryAfterAndA304ConfirmsTheCache() throws {
        let failing = try FakeHelper(#"head(503, {"retry-after": "7"}); frame(b"B", b"busy"); frame(b"D")"#)
        #expect(throws: UpstreamError.httpStatus(503, url: "https://bank.example/account", retryAfter: 7)) { try failing.fetch() }
        let unchanged = try FakeHelper(#"head(304, {"etag": '"v0"'}); frame(b"D")"#)
        let response = try unchanged.fetch()
        #expect(response.notModified && response.body.isEmpty && response.etag == "\"v0\"")
    }

    @Test func theHelpersFailureIsTheFetchsFailure() throws {
        let helper = try FakeHelper(#"frame(b"E", json.dumps({"tls": {"url": "https://bank.example/account", "reason": "bad certificate"}}).encode())"#)
        #expect(throws: UpstreamError.tls(url: "https://bank.example/account", reason: "bad certificate")) { try helper.fetch() }
    }

    @Test func aBodyOverTheCapIsRefused() throws {
        let helper = try FakeHelper(#"head(200); [frame(b"B", b"x" * 4096) for _ in range(10)]; frame(b"D")"#)
        #expect(throws: UpstreamError.tooLarge(limit: 10_000)) { try helper.fetch(maxBytes: 10_000) }
    }

    @Test func aHelperThatDiesOrHangsOrIsMissingIsReported() throws {
        let dying = try FakeHelper(#"head(200); sys.exit(3)"#)
        #expect(throws: UpstreamError.unreachable(url: "https://bank.example/account", reason: "cache-https stopped before answering")) {
            try dying.fetch()
        }

        let hanging = try FakeHelper(#"head(200); time.sleep(30)"#)
        let started = Date()
        #expect(throws: UpstreamError.timedOut(url: "https://bank.example/account", seconds: 0.5)) { try hanging.fetch(timeout: 0.5) }
        #expect(Date().timeIntervalSince(started) < 0.5 + HTTPSHelper.grace + 3)

        var request = FetchRequest(url: URL(string: "https://bank.example/")!)
        request.timeout = 1
        do {
            _ = try Fetcher(httpsHelper: "/nonexistent/cache-https").fetch(request)
            Issue.record("a missing helper must fail the fetch")
        } catch {
            guard case .unreachable(_, let reason) = error else { Issue.record("got \(error)"); return }
            #expect(reason.contains("cannot start /nonexistent/cache-https"), "\(reason)")
        }
    }
}
