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

    let process = Process()
    let transport: Transport
    let port: Int
    /// "http://127.0.0.1:PORT", "https://…" with TLS, or "http://[::1]:PORT" bound there.
    let baseURL: String
    /// Where the control routes are: the same server for plain http, a plain one beside it for TLS.
    private let controlURL: String
    private let stdin = Pipe()

    /// What `sources add` needs to trust this upstream: the test CA for TLS, nothing for plain.
    var trust: [String] { transport == .tls ? ["--ca-cert", TestCA.shared.caFile] : [] }

    init(_ transport: Transport = .plain, arguments: [String] = []) throws {
        self.transport = transport
        let stdout = Pipe()
        var tlsArguments: [String] = []
        if transport == .tls {
            let ca = try TestCA.shared.ready()
            tlsArguments = ["--tls-cert", ca.serverCertificate, "--tls-key", ca.serverKey]
        }
        process.executableURL = URL(fileURLWithPath: Paths.python)
        // -S: no site-packages (the upstream needs only the standard library), a third less of
        // Python's start-up, which the suite pays for every test that starts an upstream.
        process.arguments = ["-S", Paths.repository + "/Scripts/upstream.py", "--port", "0", "--exit-on-eof"]
            + tlsArguments + arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        // "listening on SCHEME://127.0.0.1:PORT" once the socket is bound, then for TLS
        // "control on http://127.0.0.1:PORT".
        func portOf(_ line: String) -> Int? {
            line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let first = try firstLine(of: stdout)
        guard let port = portOf(first) else {
            process.terminate()
            throw TestFailure("the upstream did not start: \(first)")
        }
        self.port = port
        baseURL = first.replacingOccurrences(of: "listening on ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        if transport == .tls || arguments.contains("--bind") {
            let second = try firstLine(of: stdout)
            guard portOf(second) != nil else {
                process.terminate()
                throw TestFailure("the upstream gave no control port: \(second)")
            }
            controlURL = second.replacingOccurrences(of: "control on ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            controlURL = baseURL
        }
    }

    deinit { stop() }

    func stop() {
        guard process.isRunning else { return }
        // SIGKILL: a test thread may block SIGTERM, and the child inherits that mask.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

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

    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cache-test-ca-\(UUID().uuidString)").path
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
