import Foundation

/// `cache serve` started for one test, on a free loopback port; stopped (SIGKILL) when released
/// unless the test stopped it itself.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let baseURL: String
    private let stdout = Pipe(), stderr = Pipe()
    private let errors: StreamedText

    convenience init(_ box: Sandbox, _ arguments: [String] = [], environment: [String: String] = [:]) throws {
        try self.init(commandLine: [Paths.cacheBinary, "serve", "--listen", "127.0.0.1:0"] + arguments, box, environment: environment)
    }

    /// The server as `commandLine` starts it, word for word (a unit's ExecStart, say).
    init(commandLine: [String], _ box: Sandbox, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: commandLine[0])
        process.arguments = Array(commandLine.dropFirst())
        process.environment = RunningProcess.environment(["CACHE_DB": box.database].merging(environment) { $1 })
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        errors = StreamedText(stderr.fileHandleForReading)
        let line = try firstLine(of: stdout)
        guard line.hasPrefix("serving http://"), let port = Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") else {
            process.waitUntilExit()
            throw TestFailure("cache serve did not start: \(line) \(errors.text)")
        }
        self.port = port
        baseURL = "http://127.0.0.1:\(port)"
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// What it wrote on stderr so far.
    var stderrText: String { errors.text }

    /// One request on a connection of its own (`Connection: close`).
    func request(_ method: String = "GET", _ target: String, headers: [String: String] = [:], body: String? = nil,
                 timeout: Double = 10) throws -> HTTPReply {
        try HTTPProbe.request(port: port, method: method, target: target, headers: headers, body: body, timeout: timeout)
    }

    func get(_ target: String, headers: [String: String] = [:]) throws -> HTTPReply {
        try request("GET", target, headers: headers)
    }

    /// Sends `signal` and waits for the exit; returns its status and how long it took.
    func stop(_ signal: Int32 = SIGTERM) -> (status: Int32, seconds: Double) {
        let started = Date()
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return (process.terminationStatus, Date().timeIntervalSince(started))
    }
}

/// Text arriving on a pipe, collected on a thread of its own.
final class StreamedText: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock(); data.append(chunk); lock.unlock()
            }
        }
    }

    var text: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}

/// An HTTP response as a test reads it: the status, the headers (names lowercased), the body
/// (de-chunked).
struct HTTPReply {
    var status: Int
    var headers: [String: String]
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else { throw TestFailure("not a JSON object: \(text)") }
        return object
    }

    func jsonArray() throws -> [[String: Any]] {
        guard let array = try JSONSerialization.jsonObject(with: body) as? [[String: Any]] else { throw TestFailure("not a JSON array: \(text)") }
        return array
    }

    /// The error a refusal names.
    var error: String? { (try? json())?["error"] as? String }
}

/// HTTP/1.1 over a plain socket, byte for byte: what a test sends is what the server gets, so
/// hostile requests (huge headers, half-open connections, bad methods) can be sent too.
enum HTTPProbe {
    /// A connection to the loopback server, from `source` (another loopback address stands for
    /// another client).
    static func connect(port: Int, timeout: Double = 10, from source: String? = nil) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(descriptor)
                throw TestFailure("bind to \(source): \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw TestFailure("connect to \(port): \(errno)")
        }
        return descriptor
    }

    static func send(_ descriptor: Int32, _ bytes: Data) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestFailure("send: \(errno)") }
            offset += sent
        }
    }

    /// Everything until the server closes the connection (or the timeout).
    static func readAll(_ descriptor: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    static func request(port: Int, method: String, target: String, headers: [String: String] = [:], body: String? = nil,
                        timeout: Double = 10) throws -> HTTPReply {
        let descriptor = try connect(port: port, timeout: timeout)
        defer { close(descriptor) }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.utf8.count)\r\n" }
        try send(descriptor, Data((head + "\r\n" + (body ?? "")).utf8))
        return try parse(readAll(descriptor))
    }

    static func parse(_ data: Data) throws -> HTTPReply {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { throw TestFailure("no complete response head: \(String(decoding: data, as: UTF8.self))") }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."), let status = Int(statusLine.split(separator: " ")[1]) else {
            throw TestFailure("not an HTTP response: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased(), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = try dechunked(body) }
        return HTTPReply(status: status, headers: headers, body: body)
    }

    /// A chunked body's bytes; throws when the last chunk never came (a response cut short).
    static func dechunked(_ data: Data) throws -> Data {
        var out = Data(), index = data.startIndex
        while true {
            guard let lineEnd = data[index...].range(of: Data("\r\n".utf8)) else { throw TestFailure("a chunked body cut short") }
            let sizeText = String(decoding: data[index..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16) else { throw TestFailure("a bad chunk size: \(sizeText)") }
            if size == 0 { return out }
            let start = lineEnd.upperBound
            guard data.distance(from: start, to: data.endIndex) >= size + 2 else { throw TestFailure("a chunked body cut short") }
            let stop = data.index(start, offsetBy: size)
            out.append(data[start..<stop])
            index = data.index(stop, offsetBy: 2)
        }
    }
}

/// A client of a server's `/events`: what arrived so far, read until a text is in it.
final class EventsClient {
    private let socket: Int32
    private(set) var text = ""

    convenience init(_ server: ServeProcess) throws {
        try self.init(port: server.port)
    }

    /// A stream through whatever listens on `port` (nginx in front, say).
    init(port: Int) throws {
        socket = try HTTPProbe.connect(port: port, timeout: 15)
        try HTTPProbe.send(socket, Data("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
    }

    deinit { close(socket) }

    /// Reads until `expected` has arrived `times` times in all (true), the server closes, or
    /// `seconds` pass.
    func read(until expected: String, times: Int = 1, seconds: Double = 15) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(seconds)
        while count(expected) < times, Date() < deadline {
            // Nothing arriving within what is left of `seconds` ends the wait.
            var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { break }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { return false }
            text += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return count(expected) >= times
    }

    /// How many times `expected` has arrived so far.
    func count(_ expected: String) -> Int { text.components(separatedBy: expected).count - 1 }
}
