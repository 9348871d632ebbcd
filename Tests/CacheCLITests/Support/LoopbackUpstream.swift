import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The project's loopback upstream (`Scripts/upstream.py`), started for one test.
///
/// It is a real HTTP server on 127.0.0.1; tests switch its faults and its account through
/// its control routes. It stops when the test releases it or when the test process dies
/// (it exits when its stdin closes).
final class LoopbackUpstream {
    let process = Process()
    let port: Int
    private let stdin = Pipe()

    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(arguments: [String] = []) throws {
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Paths.repository + "/Scripts/upstream.py", "--port", "0", "--exit-on-eof"] + arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        // The first line is "listening on http://127.0.0.1:PORT", printed once the socket is bound.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            guard let chunk = try stdout.fileHandleForReading.read(upToCount: 1), !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let portText = text.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines),
              let port = Int(portText) else {
            process.terminate()
            throw TestFailure("the upstream did not start: \(text)")
        }
        self.port = port
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
        var request = URLRequest(url: URL(string: baseURL + path)!)
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

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
