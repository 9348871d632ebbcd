import Foundation

/// Where things are, found from this test binary's own location.
enum Paths {
    /// The package root (this file is at Tests/CacheCLITests/Support/).
    static let repository: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The `cache` binary the tests start: the release build `Scripts/build-release` left in
    /// `.build/install-test` (as `.ci/run` does before the tests, and the install tests do) when it
    /// is newer than every file it is built from, else the debug one SwiftPM built beside this
    /// test bundle. Both come from these sources; the release one is what users run, and it
    /// starts without loading Swift's runtime and runs its code optimised: the debug binary's
    /// processes took a quarter of the suite's CPU, a third of that in the loader and the runtime.
    static let cacheBinary: String = {
        let debug = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("cache").path
        let release = repository + "/.build/install-test/stripped/cache"
        guard let built = modified(release), let newest = newestSource(), built > newest else { return debug }
        return release
    }()

    /// Whether the tests start the release build (it is newer than every source): `.ci/run`
    /// builds it before the suite; a fresh clone's `swift test` does not wait minutes for it.
    static var releaseIsCurrent: Bool { cacheBinary.hasSuffix("/.build/install-test/stripped/cache") }

    /// The latest modification of a file the binary is built from (the package's manifest and
    /// everything under `Sources/`); nil if one cannot be read.
    private static func newestSource() -> Date? {
        var newest = modified(repository + "/Package.swift")
        guard let files = FileManager.default.enumerator(atPath: repository + "/Sources") else { return nil }
        for case let file as String in files {
            guard let date = modified(repository + "/Sources/" + file) else { return nil }
            newest = max(newest ?? date, date)
        }
        return newest
    }

    private static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    static let jokesFile = repository + "/Scripts/data/official-jokes.json"

    /// The Python interpreter `python3` on the PATH runs, found once. Where `python3` is a
    /// version manager's shim (pyenv's is a bash script that runs pyenv), each start through it
    /// cost 80 ms of CPU against 15 ms for the interpreter itself: 8% of the suite's CPU, over
    /// the few hundred upstreams and captures it starts.
    static let python: String = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-S", "-c", "import sys; print(sys.executable)"]
        let out = Pipe()
        probe.standardOutput = out
        guard (try? probe.run()) != nil else { return "/usr/bin/python3" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        let path = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return probe.terminationStatus == 0 && path.hasPrefix("/") ? path : "/usr/bin/python3"
    }()

    /// A child's PATH: this process's, with the interpreter's folder first when `python3` on it
    /// is some other file (a shim), so that scripts starting `python3` themselves skip the shim too.
    static let childPATH: String? = {
        guard let path = ProcessInfo.processInfo.environment["PATH"] else { return nil }
        let first = path.split(separator: ":").lazy.map { $0 + "/python3" }.first { FileManager.default.isExecutableFile(atPath: String($0)) }
        guard let first, URL(fileURLWithPath: String(first)).resolvingSymlinksInPath().path
                != URL(fileURLWithPath: python).resolvingSymlinksInPath().path else { return path }
        return URL(fileURLWithPath: python).deletingLastPathComponent().path + ":" + path
    }()
}

/// What one run of the `cache` binary did.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// stdout parsed as JSON.
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8))
    }

    /// For a run through `Scripts/pty-capture.py`: the widest line drawn, in columns.
    var widestLine: Int? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.hasPrefix("widest line: ") }) else { return nil }
        return Int(line.dropFirst("widest line: ".count).prefix { $0.isNumber })
    }

    func jsonArray() throws -> [[String: Any]] {
        guard let array = try json() as? [[String: Any]] else { throw TestFailure("stdout is not a JSON array: \(stdout)") }
        return array
    }
}

/// A temporary folder with a database path, removed when released.
final class Sandbox {
    let folder: String
    var database: String { folder + "/cache.sqlite3" }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("cache-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// Runs the built `cache` binary against this sandbox's database.
    @discardableResult
    func cache(_ arguments: String..., environment: [String: String] = [:]) throws -> RunResult {
        try cache(arguments, environment: environment)
    }

    @discardableResult
    func cache(_ arguments: [String], environment: [String: String] = [:]) throws -> RunResult {
        try run(Paths.cacheBinary, arguments, environment: ["CACHE_DB": database].merging(environment) { $1 })
    }

    /// Starts the `cache` binary without waiting for it.
    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningProcess {
        try RunningProcess(Paths.cacheBinary, arguments, environment: ["CACHE_DB": database].merging(environment) { $1 })
    }

    /// Runs a command in a pseudo-terminal (`Scripts/pty-capture.py`) and returns what a person
    /// at that terminal would have received, escapes included.
    func terminal(_ arguments: [String], environment: [String: String] = [:], rows: Int = 30, columns: Int = 100,
                  answer: String? = nil) throws -> RunResult {
        try run(Paths.python, [Paths.repository + "/Scripts/pty-capture.py", "--rows", String(rows), "--cols", String(columns)]
                    + (answer.map { ["--answer", $0] } ?? []) + ["--", Paths.cacheBinary] + arguments,
                environment: ["CACHE_DB": database].merging(environment) { $1 })
    }

    /// Runs any program and collects its output and exit status.
    func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> RunResult {
        try RunningProcess(executable, arguments, environment: extra).wait().0
    }
}

/// A started process whose output is collected when it is waited for.
final class RunningProcess {
    let process = Process()
    let started = ContinuousClock.now
    private let out = Pipe(), err = Pipe()
    private let outData: ReadAll, errData: ReadAll

    init(_ executable: String, _ arguments: [String], environment extra: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = Self.environment(extra)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        outData = ReadAll(out.fileHandleForReading)
        errData = ReadAll(err.fileHandleForReading)
    }

    /// This process's environment for a child: no colour, no proxy (the tests talk to loopback
    /// servers: a proxy set on the machine must not come between), and `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["PATH"] = Paths.childPATH
        for variable in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            environment[variable] = nil
        }
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Waits for the exit; returns the result and the wall time from start to exit.
    func wait() -> (RunResult, Duration) {
        let stdout = outData.wait()
        let stderr = errData.wait()
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - started
        return (RunResult(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                          stderr: String(decoding: stderr, as: UTF8.self)), elapsed)
    }
}

/// Drains a pipe on another thread, so a chatty stderr cannot block the child.
private final class ReadAll: @unchecked Sendable {
    // Written once on the reading thread before `done` is signalled; read after the wait.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}

/// The same runs, awaited: the waiting happens on a thread of its own, so a test that waits (for
/// a child, a timeout, a TTL) leaves the test runner's few threads to the tests that compute.
/// The tests are `async`, so these overloads are the ones they call.
extension Sandbox {
    @discardableResult
    func cache(_ arguments: String..., environment: [String: String] = [:]) async throws -> RunResult {
        try await cache(arguments, environment: environment)
    }

    @discardableResult
    func cache(_ arguments: [String], environment: [String: String] = [:]) async throws -> RunResult {
        try await start(arguments, environment: environment).finished().0
    }

    func terminal(_ arguments: [String], environment: [String: String] = [:], rows: Int = 30, columns: Int = 100,
                  answer: String? = nil) async throws -> RunResult {
        let box = UncheckedSendable(self)
        return try await offThePool { try box.value.terminal(arguments, environment: environment, rows: rows, columns: columns, answer: answer) }
    }

    func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) async throws -> RunResult {
        try await RunningProcess(executable, arguments, environment: extra).finished().0
    }
}

extension RunningProcess {
    /// `wait()`, on a thread of its own.
    func finished() async -> (RunResult, Duration) {
        let process = UncheckedSendable(self)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: process.value.wait()) }
        }
    }
}

/// Runs blocking work on a thread of its own and awaits it. (It only computes and returns: an
/// `#expect` inside would not reach the test.)
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

/// Sleeps without holding one of the test runner's threads.
func pause(_ seconds: Double) async throws {
    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
}

/// A value handed to the one thread that uses it from then on.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
