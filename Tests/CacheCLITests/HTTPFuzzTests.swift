import Foundation
@testable import CacheCLI
@testable import OfflineCache
import Testing

/// A seeded fuzz of the HTTP path: `Scripts/fuzz-upstream.py` answers case N with one of a
/// series of broken, odd and valid answers (status lines, headers, lengths, chunking, encodings,
/// bodies, cuts), written byte for byte. Each case is synced once, and every outcome must be one
/// the README promises: an exit code from its table, the cache as it was after any failure, and
/// never a crash. Most cases run in-process through the sync engine and the real HTTP client;
/// some run through the built binary, where a crash would show as an exit of 128 or more.
@Suite(.waiting) struct HTTPFuzzTests {
    static let seed = 20261130
    /// 600 cases and 2 batches in the suite; 2,000 and 4 under `Scripts/soak`.
    static let inProcessCases = TestScale.pick(suite: 600, soak: 2000)
    static let binaryBatches = TestScale.pick(suite: 2, soak: 4), perBatch = 25

    /// The exit codes in the reference's table (docs/reference.md, which the README links).
    static func documentedExitCodes() throws -> Set<Int32> {
        let readme = try String(contentsOfFile: Paths.repository + "/docs/reference.md", encoding: .utf8)
        let table = readme.components(separatedBy: "## Exit codes").dropFirst().first?.components(separatedBy: "\n## ").first ?? ""
        return Set(table.split(separator: "\n").compactMap { line in
            line.hasPrefix("| ") ? Int32(line.dropFirst(2).prefix { $0.isNumber }) : nil
        })
    }

    @Test func everyHostileAnswerEndsInADocumentedWay() async throws {
        let codes = try Self.documentedExitCodes()
        #expect(codes.contains(65) && codes.contains(75) && codes.count >= 8)
        let upstream = try FuzzUpstream(seed: Self.seed)
        let box = try Sandbox()
        let started = ContinuousClock.now

        // In-process: one source, its URL pointed at each case in turn.
        let summary = try await offThePool { [database = box.database, base = upstream.baseURL] in
            try Self.runInProcess(database: database, base: base, cases: Self.inProcessCases, codes: codes)
        }
        #expect(summary.problems.isEmpty, "\(summary.problems.prefix(20).joined(separator: "\n"))")
        // The series reaches every way out: successes, bad data, outages, rate limits.
        #expect(summary.outcomes["updated", default: 0] > Self.inProcessCases / 40, "\(summary.outcomes)")
        #expect(Set(summary.exitCodes.keys).isSuperset(of: [0, 65, 69, 75]), "\(summary.exitCodes)")

        // Through the binary: batches of sources, each at a case of its own.
        var binaryExits: [Int32: Int] = [:]
        for batch in 0..<Self.binaryBatches {
            let database = box.folder + "/batch\(batch).sqlite3"
            let first = Self.inProcessCases + batch * Self.perBatch
            try await offThePool { [base = upstream.baseURL] in
                let cache = try CacheDatabase(path: database, create: true)
                for number in first..<(first + Self.perBatch) {
                    try SourceStore(cache).add(Source(name: "case\(number)", kind: .jokes, url: URL(string: "\(base)/case/\(number)")!))
                }
            }
            let result = try await box.run(Paths.cacheBinary, ["--db", database, "sync", "--json", "--timeout", "3", "--parallel", "4"])
            binaryExits[result.status, default: 0] += 1
            #expect(result.status < 128, "batch \(batch) crashed: \(result.status) \(result.stderr.suffix(2000))")
            #expect(codes.contains(result.status), "batch \(batch): exit \(result.status) is not in the README's table")
            let reports = (try? result.jsonArray()) ?? []
            #expect(reports.count == Self.perBatch, "batch \(batch): \(result.stdout.prefix(500)) \(result.stderr.suffix(500))")
            for report in reports {
                let outcome = report["outcome"] as? String ?? "-"
                #expect(["updated", "unchanged", "failed", "skipped"].contains(outcome), "\(report)")
            }
        }
        let seconds = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
        print("""
            HTTP fuzz, seed \(Self.seed): \(Self.inProcessCases) cases in-process, \(Self.binaryBatches * Self.perBatch) through \
            the binary, in \(String(format: "%.1f", seconds)) s; in-process outcomes \(summary.outcomes), exit codes \
            \(summary.exitCodes.sorted { $0.key < $1.key }); binary batch exits \(binaryExits)
            \(summary.examples.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.joined(separator: " / "))" }.joined(separator: "\n"))
            """)
    }

    struct Summary: Sendable {
        var outcomes: [String: Int] = [:]
        var exitCodes: [Int32: Int] = [:]
        var problems: [String] = []
        /// The first errors seen for each exit code, for the log.
        var examples: [Int32: [String]] = [:]
    }

    static func runInProcess(database path: String, base: String, cases: Int, codes: Set<Int32>) throws -> Summary {
        let database = try CacheDatabase(path: path, create: true)
        try SourceStore(database).add(Source(name: "fuzz", kind: .jokes, url: URL(string: base + "/case/0")!))
        var engine = SyncEngine(database: database)
        engine.sleep = { _ in }  // retries and Retry-After waits cost no time here
        var options = SyncEngine.Options(timeout: 3)
        options.maxAttempts = 2
        let db = database.connection
        func cached() throws -> [String] {
            try db.query("SELECT id || '|' || type || '|' || setup || '|' || punchline || '|' || seen_at FROM jokes ORDER BY id") { $0.text(0) ?? "" }
        }
        var summary = Summary()
        var before = try cached()
        for number in 0..<cases {
            var source = try SourceStore(database).named("fuzz")
            source.url = URL(string: "\(base)/case/\(number)")!
            source.identity = nil
            let report = engine.sync(source, options: options)
            summary.outcomes[report.outcome.rawValue, default: 0] += 1
            let after = try cached()
            if let failure = report.failure {
                let code = ExitCode.of(failure, hadCachedRows: report.hadCachedRows)
                summary.exitCodes[code, default: 0] += 1
                if summary.examples[code, default: []].count < 3 { summary.examples[code, default: []].append("case \(number): \(failure)") }
                if !codes.contains(code) { summary.problems.append("case \(number): exit \(code) for \(failure)") }
                if after != before { summary.problems.append("case \(number): a failed sync (\(failure)) changed the cache") }
            } else {
                summary.exitCodes[0, default: 0] += 1
                if ![.updated, .unchanged].contains(report.outcome) { summary.problems.append("case \(number): \(report.outcome)") }
            }
            before = after
        }
        if try db.scalarText("PRAGMA integrity_check") != "ok" { summary.problems.append("the database is damaged") }
        return summary
    }
}

/// `Scripts/fuzz-upstream.py`, started for one test; it exits when the test's end of its stdin closes.
final class FuzzUpstream {
    let process = Process()
    let baseURL: String
    private let stdin = Pipe()

    init(seed: Int) throws {
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: Paths.python)
        process.arguments = [Paths.repository + "/Scripts/fuzz-upstream.py", "--seed", String(seed)]
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let text = try firstLine(of: stdout).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening on ") else { throw TestFailure("the fuzz upstream did not start: \(text)") }
        baseURL = String(text.dropFirst("listening on ".count))
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
    }
}
