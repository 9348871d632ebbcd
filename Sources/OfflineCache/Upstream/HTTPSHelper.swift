import Foundation

/// Fetches `https://` through the `cache-https` helper program.
///
/// TLS on Linux comes from FoundationNetworking (URLSession over libcurl), and loading those
/// libraries cost every run of `cache` about 15 ms of start-up, reads included. So only the
/// helper links them: `cache` starts it for an https request, hands it the request on stdin
/// (the bearer token never appears in arguments or the environment), and reads the answer
/// back as frames on its stdout, enforcing the body cap and the timeout itself as well.
struct HTTPSHelper {
    let request: FetchRequest
    /// The helper's path; nil looks beside this program, then on PATH.
    let helperPath: String?

    static let programName = "cache-https"
    /// The helper enforces the timeout; this is the margin before the parent stops waiting.
    static let grace: Double = 5

    func fetch() throws(UpstreamError) -> FetchResponse {
        let url = Source.redacted(request.url)
        guard let program = helperPath ?? Self.locate() else {
            throw .unreachable(url: url, reason: "https needs the \(Self.programName) program, installed beside cache")
        }
        let child: HelperProcess
        do {
            child = try HelperProcess.start(program)
        } catch {
            throw .unreachable(url: url, reason: "cannot start \(program): \(error.message)")
        }
        defer { child.finish() }

        let wire = HTTPSWire.Request(url: request.url.absoluteString, headers: request.headers.map { [$0.name, $0.value] },
                                     timeout: request.timeout, maxBytes: request.maxBytes, maxRedirects: request.maxRedirects,
                                     etag: request.etag, lastModified: request.lastModified)
        guard let encoded = try? JSONEncoder().encode(wire), child.send(encoded) else {
            throw .unreachable(url: url, reason: "\(Self.programName) did not take the request")
        }

        let deadline = ContinuousClock.now + .seconds(request.timeout + Self.grace)
        var head: HTTPSWire.Head?
        var body = Data()
        while true {
            let frame: HTTPSWire.Frame
            switch child.readFrame(until: deadline) {
            case .frame(let next): frame = next
            case .timedOut: throw .timedOut(url: url, seconds: request.timeout)
            case .ended: throw .unreachable(url: url, reason: "\(Self.programName) stopped before answering")
            }
            switch frame.kind {
            case .head:
                head = try? JSONDecoder().decode(HTTPSWire.Head.self, from: frame.payload)
            case .body:
                body.append(frame.payload)
                guard body.count <= request.maxBytes else { throw .tooLarge(limit: request.maxBytes) }
                request.onBytes?(body.count, head.flatMap { $0.expectedLength > 0 ? Int($0.expectedLength) : nil })
            case .failure:
                throw (try? JSONDecoder().decode(UpstreamError.self, from: frame.payload))
                    ?? .unreachable(url: url, reason: "\(Self.programName) failed without saying why")
            case .done:
                guard let head else { throw .unreachable(url: url, reason: "\(Self.programName) answered without a status") }
                return try Self.response(head, body: body, url: url)
            }
        }
    }

    /// A complete exchange as the sync engine sees it: 304, a failing status, or the body.
    static func response(_ head: HTTPSWire.Head, body: Data, url: String) throws(UpstreamError) -> FetchResponse {
        let etag = head.headers["etag"], lastModified = head.headers["last-modified"]
        if head.status == 304 { return FetchResponse(status: 304, body: Data(), etag: etag, lastModified: lastModified) }
        guard (200..<300).contains(head.status) else {
            throw .httpStatus(head.status, url: url, retryAfter: head.headers["retry-after"].flatMap { RetryAfter.seconds($0) })
        }
        return FetchResponse(status: head.status, body: body, etag: etag, lastModified: lastModified)
    }

    /// Beside this program (the usual install, and SwiftPM's build folder), then on PATH.
    static func locate() -> String? {
        var folders: [String] = []
        if let own = ProgramLocation.path { folders.append((own as NSString).deletingLastPathComponent) }
        folders += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return folders.lazy.map { $0 + "/" + programName }.first { access($0, X_OK) == 0 }
    }
}

/// What `cache` and `cache-https` say to each other. The request goes to the helper's stdin as
/// JSON; the answer comes back on its stdout as frames: a kind byte, a 4-byte big-endian
/// length, then that many bytes. A head, body chunks, then done — or a failure.
public enum HTTPSWire {
    public struct Request: Codable, Sendable {
        public var url: String
        public var headers: [[String]]
        public var timeout: Double
        public var maxBytes: Int
        public var maxRedirects: Int
        public var etag: String?
        public var lastModified: String?

        /// The request as `FetchRequest` (without a progress callback: the parent reports that).
        public var fetchRequest: FetchRequest? {
            guard let url = URL(string: url) else { return nil }
            var request = FetchRequest(url: url, headers: headers.compactMap { $0.count == 2 ? Source.Header(name: $0[0], value: $0[1]) : nil },
                                       timeout: timeout, maxBytes: maxBytes, maxRedirects: maxRedirects)
            request.etag = etag
            request.lastModified = lastModified
            return request
        }
    }

    /// The status line and the headers the engine uses (names lowercased).
    public struct Head: Codable, Sendable {
        public var status: Int
        public var headers: [String: String]
        /// The announced length, or -1.
        public var expectedLength: Int64

        public init(status: Int, headers: [String: String], expectedLength: Int64) {
            self.status = status
            self.headers = headers
            self.expectedLength = expectedLength
        }
    }

    public enum Kind: UInt8, Sendable {
        case head = 0x48     // H: a Head as JSON
        case body = 0x42     // B: bytes of the body
        case failure = 0x45  // E: an UpstreamError as JSON
        case done = 0x44     // D: the exchange completed
    }

    public struct Frame: Sendable {
        public var kind: Kind
        public var payload: Data
    }

    /// One frame's bytes.
    public static func encode(_ kind: Kind, _ payload: Data = Data()) -> Data {
        var frame = Data([kind.rawValue])
        withUnsafeBytes(of: UInt32(payload.count).bigEndian) { frame.append(contentsOf: $0) }
        frame.append(payload)
        return frame
    }
}

/// The running helper: its pid, the pipe to its stdin and the pipe from its stdout.
private final class HelperProcess {
    struct Failure: Error { let message: String }

    enum Read {
        case frame(HTTPSWire.Frame)
        case timedOut
        case ended
    }

    let pid: pid_t
    private var input: Int32
    private let output: Int32
    private var buffer = Data()
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)
    private var finished = false

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.input = input
        self.output = output
    }

    static func start(_ program: String) throws(Failure) -> HelperProcess {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0 else { throw Failure(message: String(cString: strerror(errno))) }
        guard pipe(&fromChild) == 0 else {
            close(toChild[0]); close(toChild[1])
            throw Failure(message: String(cString: strerror(errno)))
        }
        // Close-on-exec, so no other program this process starts holds them open.
        // (pipe2 would do it atomically; Swift's Glibc module does not export it.)
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC) }
        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        // dup2 clears close-on-exec on the copies, so the child keeps exactly these three.
        posix_spawn_file_actions_adddup2(&files, toChild[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&files, fromChild[1], STDOUT_FILENO)
        posix_spawn_file_actions_addopen(&files, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // An empty signal mask: a thread that spawns may have signals blocked.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)

        let argv = [strdup(program), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var code = posix_spawn(&pid, program, &files, &attributes, argv, environ)
        // "Text file busy": another thread's fork still holds the program open for writing
        // (it was just written, or installed). That passes in moments.
        for _ in 0..<20 where code == ETXTBSY {
            usleep(5_000)
            code = posix_spawn(&pid, program, &files, &attributes, argv, environ)
        }
        close(toChild[0]); close(fromChild[1])
        guard code == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw Failure(message: String(cString: strerror(code)))
        }
        return HelperProcess(pid: pid, input: toChild[1], output: fromChild[0])
    }

    /// Writes the request and closes the helper's stdin.
    func send(_ data: Data) -> Bool {
        defer { close(input); input = -1 }
        var sent = 0
        while sent < data.count {
            let written = data.withUnsafeBytes { write(input, $0.baseAddress! + sent, data.count - sent) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            sent += written
        }
        return true
    }

    /// The next frame, reading as needed until `deadline`.
    func readFrame(until deadline: ContinuousClock.Instant) -> Read {
        while true {
            if buffer.count >= 5 {
                let length = buffer.dropFirst(1).prefix(4).reduce(0) { $0 << 8 | Int($1) }
                if buffer.count >= 5 + length {
                    let kind = HTTPSWire.Kind(rawValue: buffer[buffer.startIndex])
                    let payload = buffer.subdata(in: (buffer.startIndex + 5)..<(buffer.startIndex + 5 + length))
                    buffer.removeSubrange(buffer.startIndex..<(buffer.startIndex + 5 + length))
                    guard let kind else { return .ended }  // not our protocol
                    return .frame(HTTPSWire.Frame(kind: kind, payload: payload))
                }
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return .timedOut }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(remaining / .milliseconds(1), 60_000).rounded(.up))
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }  // the deadline is checked above
            let count = read(output, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return .ended }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Reaps the helper, stopping it first if it is still running: its answer is complete, or
    /// no longer wanted.
    func finish() {
        guard !finished else { return }
        finished = true
        if input >= 0 { close(input) }
        close(output)
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == 0 {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
    }
}
