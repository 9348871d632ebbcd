import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The project's loopback upstream (`Scripts/upstream.py`), started for one test.
///
/// It is a real HTTP server on 127.0.0.1 — or, with `.tls`, a real https server whose
/// certificate a throwaway CA signed (`TestCA`) — and tests switch its faults and its account
/// through its control routes (on a plain port of their own when it speaks TLS). It stops when
/// the test releases it or when the test process dies (it exits when its stdin closes).
final class LoopbackUpstream {
    enum Transport: String, CaseIterable, CustomStringConvertible, Sendable {
        case plain, tls
        var description: String { rawValue }
    }

    let transport: Transport
    let port: Int
    /// "http://127.0.0.1:PORT", "https://…" with TLS, or "http://[::1]:PORT" bound there.
    let baseURL: String
    /// Where the control routes are: the same server for plain http, a plain one beside it for TLS.
    private let controlURL: String
    private let child: UpstreamZygote.Child

    /// What `sources add` needs to trust this upstream: the test CA for TLS, nothing for plain.
    var trust: [String] { transport == .tls ? ["--ca-cert", TestCA.shared.caFile] : [] }

    init(_ transport: Transport = .plain, arguments: [String] = []) throws {
        self.transport = transport
        var tlsArguments: [String] = []
        if transport == .tls {
            let ca = try TestCA.shared.ready()
            tlsArguments = ["--tls-cert", ca.serverCertificate, "--tls-key", ca.serverKey]
        }
        child = try UpstreamZygote.shared.get().start(["--port", "0", "--exit-on-eof"] + tlsArguments + arguments)
        // "listening on SCHEME://127.0.0.1:PORT" once the socket is bound, then for TLS
        // "control on http://127.0.0.1:PORT".
        func portOf(_ line: String) -> Int? {
            line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let first = try child.line()
        guard let port = portOf(first) else {
            child.stop()
            throw TestFailure("the upstream did not start: \(first)")
        }
        self.port = port
        baseURL = first.replacingOccurrences(of: "listening on ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        if transport == .tls || arguments.contains("--bind") {
            let second = try child.line()
            guard portOf(second) != nil else {
                child.stop()
                throw TestFailure("the upstream gave no control port: \(second)")
            }
            controlURL = second.replacingOccurrences(of: "control on ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            controlURL = baseURL
        }
    }

    deinit { stop() }

    /// Kills the upstream and returns once it is gone: its port refuses from then on.
    func stop() { child.stop() }

    /// Sets faults: `["status": 500]`, `["fault": "truncated"]`, `["delay": 2]`, `["reset": true]`.
    func control(_ settings: [String: Any]) throws {
        _ = try post("/_control", settings)
    }

    /// Replaces the account the upstream serves (the envelope's body).
    func setAccount(_ body: [String: Any]) throws {
        _ = try post("/_account", body)
    }

    /// Serves a generated account of `count` transactions (deterministic for a seed).
    @discardableResult
    func generate(count: Int, seed: Int) throws -> Data {
        try post("/_generate", ["count": count, "seed": seed])
    }

    /// The generic API's records (/api/items, /api/paged, /api/cursor) from now on.
    func setItems(_ items: [[String: Any]]) throws { _ = try post("/_items", ["items": items]) }
    func setItems(count: Int) throws { _ = try post("/_items", ["count": count]) }
    /// Turns on OAuth2 for /api/*: {"client_id", "client_secret", "expires_in", "expire_after"}.
    func setOAuth(_ settings: [String: Any]) throws { _ = try post("/_oauth", settings) }
    /// Turns on HTTP Basic authentication for /api/*: {"user", "password"} ([:] turns it off).
    func setBasic(_ settings: [String: Any]) throws { _ = try post("/_basic", settings) }

    /// Serves `file`'s bytes at `path` from now on (a CSV table, say).
    func serve(_ path: String, file: String) throws {
        _ = try post("/_static", ["path": path, "file": file])
    }

    /// The next `times` generic API requests are refused with `status` and `X-RateLimit-Remaining: 0`,
    /// the limit resetting in `resetIn` seconds (`X-RateLimit-Reset`), or with `Retry-After: retryAfter` instead.
    func rateLimit(status: Int, resetIn: Double = 60, retryAfter: Double? = nil, times: Int = 1) throws {
        var answer: [String: Any] = ["status": status, "reset_in": resetIn, "times": times]
        if let retryAfter { answer["retry_after"] = retryAfter }
        _ = try post("/_rate_limit", answer)
    }

    /// The writable collection's control (`/_tasks`): `["tasks": [...]]` sets it, and faults:
    /// `["status": 503, "times": 2]`, `["apply_then_drop": 1]`, `["hold": true]` (until
    /// `["release": true]`), `["reset": true]`.
    func tasks(_ settings: [String: Any]) throws { _ = try post("/_tasks", settings) }

    /// The collection now, the writes it applied and every write it was sent.
    func taskLog() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: request("GET", "/_tasks", body: nil)) as? [String: Any] ?? [:]
    }

    func stats() throws -> [String: Any] {
        let data = try request("GET", "/_stats", body: nil)
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// The JSON the upstream answers at `path` right now.
    func get(_ path: String) throws -> Any {
        try JSONSerialization.jsonObject(with: request("GET", path, body: nil))
    }

    private func post(_ path: String, _ value: [String: Any]) throws -> Data {
        try request("POST", path, body: JSONSerialization.data(withJSONObject: value))
    }

    private func request(_ method: String, _ path: String, body: Data?) throws -> Data {
        var request = URLRequest(url: URL(string: controlURL + path)!)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let box = ResultBox()
        URLSession.shared.dataTask(with: request) { data, _, error in
            box.set(data, error)
        }.resume()
        return try box.wait()
    }
}

/// Carries a URLSession answer back to the waiting test thread.
private final class ResultBox: @unchecked Sendable {
    // Written once by URLSession's queue before `done` is signalled, read after the wait.
    private var data: Data?
    private var error: Error?
    private let done = DispatchSemaphore(value: 0)

    func set(_ data: Data?, _ error: Error?) {
        self.data = data
        self.error = error
        done.signal()
    }

    func wait() throws -> Data {
        done.wait()
        if let error { throw error }
        return data ?? Data()
    }
}

/// `Scripts/upstream.py --zygote`: one Python process, started at the first upstream a test asks
/// for, that forks every upstream after it. Each start of Python with the upstream's imports
/// cost about 0.1 s of CPU: forking them took Python from 46 to 30 of the suite's CPU-seconds.
/// It ends when this process does (its stdin closes), and so do its upstreams (theirs close).
final class UpstreamZygote: @unchecked Sendable {
    static let shared = Result { try UpstreamZygote() }

    private let process = Process()
    private let requests = Pipe()
    private let lock = NSLock()

    private init() throws {
        process.executableURL = URL(fileURLWithPath: Paths.python)
        // -S: no site-packages (the upstream needs only the standard library).
        process.arguments = ["-S", Paths.repository + "/Scripts/upstream.py", "--zygote"]
        process.standardInput = requests
        try process.run()
    }

    /// An upstream the zygote forked: its stdin and stdout are FIFOs this process holds open.
    final class Child: @unchecked Sendable {
        let pid: pid_t
        /// The upstream's stdin, held for writing: it exits when this closes (`--exit-on-eof`).
        private let input: Int32
        /// Its stdout, read a byte at a time so nothing after a line is taken.
        private let output: Int32
        private let lock = NSLock()
        private var stopped = false

        fileprivate init(input: Int32, output: Int32) throws {
            self.input = input
            self.output = output
            let first = try Self.line(output, waitingForTheWriter: true)
            guard first.hasPrefix("pid "), let pid = pid_t(first.dropFirst(4).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                close(input)
                close(output)
                throw TestFailure("the upstream zygote's child did not start: \(first)")
            }
            self.pid = pid
        }

        deinit { stop() }

        func line() throws -> String { try Self.line(output, waitingForTheWriter: false) }

        /// Kills the upstream, and waits for its stdout to close: it has exited, its ports closed.
        /// (Not SIGTERM: the server's shutdown polls every half a second.)
        func stop() {
            lock.lock()
            defer { lock.unlock() }
            guard !stopped else { return }
            stopped = true
            // Killed only while its stdout is open: a child already gone may have left its pid
            // to another process.
            var open = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            if poll(&open, 1, 0) == 0 || open.revents & Int16(POLLHUP) == 0 { kill(pid, SIGKILL) }
            var byte: UInt8 = 0
            while read(output, &byte, 1) > 0 {}
            close(output)
            close(input)
        }

        /// The next line on `fd`. Opened before the child opened its end, the FIFO reads as
        /// ended until it does: so the first line is polled for (10 s at most), then read plainly.
        private static func line(_ fd: Int32, waitingForTheWriter: Bool) throws -> String {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while line.last != UInt8(ascii: "\n") {
                let count = read(fd, &byte, 1)
                if count == 1 {
                    line.append(byte)
                } else if waitingForTheWriter, count == 0 || errno == EAGAIN, ContinuousClock.now < deadline {
                    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&ready, 1, 10)
                    if ready.revents & Int16(POLLIN) == 0 { usleep(1_000) }
                } else {
                    break
                }
            }
            if waitingForTheWriter { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// Forks an upstream run with `arguments`.
    func start(_ arguments: [String]) throws -> Child {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cache-upstream-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let stdin = folder + "/stdin", stdout = folder + "/stdout"
        guard mkfifo(stdin, 0o600) == 0, mkfifo(stdout, 0o600) == 0 else { throw TestFailure("mkfifo: \(errno)") }
        // Both opened before the child is asked for, so that neither its opens nor these wait:
        // stdin for reading and writing (the child sees its end only when this one closes).
        let input = open(stdin, O_RDWR | O_CLOEXEC)
        let output = open(stdout, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard input >= 0, output >= 0 else { throw TestFailure("cannot open the upstream's FIFOs: \(errno)") }
        let request = try JSONSerialization.data(withJSONObject: ["arguments": arguments, "stdin": stdin, "stdout": stdout])
        try lock.withLock {
            guard process.isRunning else { throw TestFailure("the upstream zygote has exited (\(process.terminationStatus))") }
            requests.fileHandleForWriting.write(request + Data("\n".utf8))
        }
        // The child has opened both FIFOs once it has written its first line ("pid N"), so the
        // folder may go then.
        return try Child(input: input, output: output)
    }
}

/// `Scripts/forward-proxy.py`: a forward HTTP proxy on loopback that logs each URL it relays.
final class ForwardProxy {
    let process = Process()
    let url: String
    let log: String
    private let stdin = Pipe()

    init(log: String) throws {
        self.log = log
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: Paths.python)
        process.arguments = [Paths.repository + "/Scripts/forward-proxy.py", "--log", log, "--exit-on-eof"]
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let text = try firstLine(of: stdout)
        guard text.hasPrefix("listening on ") else {
            process.terminate()
            throw TestFailure("the proxy did not start: \(text)")
        }
        url = text.replacingOccurrences(of: "listening on ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The URLs relayed so far, one a line.
    var relayed: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    deinit {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A throwaway certificate authority and a server certificate it signed for 127.0.0.1, made
/// once per test run with the `openssl` command (`Scripts/tls-test-certs`).
final class TestCA: @unchecked Sendable {
    static let shared = TestCA()

    let folder = RunFolder.path + "/ca"
    var caFile: String { folder + "/ca.pem" }
    var serverCertificate: String { folder + "/server.pem" }
    var serverKey: String { folder + "/server.key" }
    private let lock = NSLock()
    private var made = false

    /// Makes the certificates on first use.
    func ready() throws -> TestCA {
        lock.lock()
        defer { lock.unlock() }
        if !made {
            let result = try RunningProcess(Paths.repository + "/Scripts/tls-test-certs", [folder], environment: [:]).wait().0
            guard result.status == 0, FileManager.default.fileExists(atPath: serverKey) else {
                throw TestFailure("Scripts/tls-test-certs failed: \(result.stderr)")
            }
            made = true
        }
        return self
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The next line a helper process writes on `pipe` (its "listening on …"), read a byte at a time
/// so nothing after it is taken from the pipe.
func firstLine(of pipe: Pipe) throws -> String {
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        guard let chunk = try pipe.fileHandleForReading.read(upToCount: 1), !chunk.isEmpty else { break }
        line.append(chunk)
    }
    return String(decoding: line, as: UTF8.self)
}
