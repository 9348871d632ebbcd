import Foundation
import Glibc
import Testing
@testable import CacheServer
@testable import OfflineCache

/// Issue 55 ("Hardening, round 5"), items 2–4: output lost to a full disk is a failure, a
/// heartbeat from the future is no measure of a follower's lag, and a server notices that its
/// path now names another file. (Item 1, `apply --prune`'s guard and names given twice, is in
/// `SourcesFileTests`.)
@Suite(.gated) struct HardeningRoundFiveTests {
    // MARK: Item 2: lost output exits 74

    /// Every command that writes data to stdout, on a cache with rows.
    static let writers: [[String]] = [
        ["export", "items", "--ndjson"], ["export", "items"], ["list", "items", "--offline", "--json"], ["list", "items", "--offline"],
        ["sources", "export"], ["sources", "list", "--json"], ["metrics"], ["status"], ["status", "--json"],
        ["sql", "SELECT name FROM sources"], ["history", "items"], ["log", "items", "1"],
    ]

    /// A write to stdout that fails (ENOSPC, EIO) is reported once, on stderr, and the command
    /// exits 74 (EX_IOERR), whatever it was doing; a closed pipe (EPIPE) still ends quietly:
    /// its reader had read enough.
    @Test(arguments: writers)
    func aFailedWriteToStdoutExits74(_ arguments: [String]) throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]"#)
        let written = box.runInProcess(arguments, fetcher: Fetcher(), environment: [:])
        #expect(written.status == 0 && !written.stdout.isEmpty, "\(arguments): \(written.stderr)")

        for (errno, message) in [(ENOSPC, "No space left on device"), (EIO, "Input/output error")] {
            let lost = box.runInProcess(arguments, fetcher: Fetcher(), environment: [:], stdoutFails: errno)
            #expect(lost.status == 74, "\(arguments): \(lost.status) \(lost.stderr)")
            #expect(lost.stderr.hasSuffix("cache: cannot write to stdout: \(message)\n"), "\(arguments): \(lost.stderr)")
            #expect(lost.stderr.components(separatedBy: "cannot write").count == 2, "said more than once: \(lost.stderr)")
        }
        let closed = box.runInProcess(arguments, fetcher: Fetcher(), environment: [:], stdoutFails: EPIPE)
        #expect(closed.status == 0 && !closed.stderr.contains("cannot write"), "\(arguments): \(closed.status) \(closed.stderr)")
    }

    /// The same through the built binary and a real full device: `cache export … > /dev/full`.
    @Test func anExportIntoAFullDeviceExits74() async throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]"#)
        let full = try await box.run("/bin/sh", ["-c", "exec '\(Paths.cacheBinary)' --db '\(box.database)' export items --ndjson > /dev/full"])
        #expect(full.status == 74, "\(full.status): \(full.stderr)")
        #expect(full.stderr == "cache: cannot write to stdout: No space left on device\n", "\(full.stderr)")
        let fine = try await box.run("/bin/sh", ["-c", "exec '\(Paths.cacheBinary)' --db '\(box.database)' export items --ndjson > /dev/null"])
        #expect(fine.status == 0 && fine.stderr.isEmpty, "\(fine.stderr)")
    }

    // MARK: Item 3: a heartbeat from the future

    @Test func aHeartbeatAheadOfTheClockIsNoMeasure() {
        #expect(ReplicaLag.measured(nil) == .unknown)
        #expect(ReplicaLag.measured(12) == .behind(seconds: 12))
        // Within the tolerance: the clocks agree well enough; no lag.
        #expect(ReplicaLag.measured(-ReplicaLag.clockTolerance) == .behind(seconds: 0))
        #expect(ReplicaLag.measured(-ReplicaLag.clockTolerance - 1) == .ahead(seconds: ReplicaLag.clockTolerance + 1))
        #expect(!ReplicaLag.ahead(seconds: 3600).isWithin(Int.max))
        #expect(ReplicaLag.worst([.behind(seconds: 1), .ahead(seconds: 9), .unknown]) == .ahead(seconds: 9))
        #expect(ReplicaLag.ahead(seconds: 9).json?.compact == "null")
    }

    /// A follower whose primary's clock ran ahead: the lag read 0 for as long as the clock was
    /// ahead (for ever, stamped 2099), so `--max-lag` and `/healthz` passed after replication
    /// stopped. Now each fails, naming the skew; a stamp a second or two ahead still passes.
    @Test func aFollowerWithAHeartbeatFromTheFutureFailsItsChecks() throws {
        let served = try InProcessServer {
            $0.readOnly = true
            $0.maxLag = 3600
        }
        let box = served.box
        func stamp(_ at: String) throws {
            try Heartbeat(CacheDatabase(path: box.database, create: false)).beat(at: at)
        }
        try stamp("2099-01-01T00:00:00.000Z")
        let check = box.cli("--read-only", "status", "--max-lag", "1h")
        #expect(check.status == 1, "\(check.status): \(check.stdout) \(check.stderr)")
        #expect(check.stdout.contains("replica: its primary's newest heartbeat is stamped ") && check.stdout.contains("d ahead of this machine's clock"),
                "\(check.stdout)")
        #expect(try box.cli("--read-only", "status", "--json").jsonArray().first?["replica_lag_s"] is NSNull)
        #expect(box.cli("--read-only", "status").stderr.contains("ahead of this machine's clock"))

        let health = served.get("/healthz")
        #expect(health.status == 503, "\(health.status) \(health.text)")
        let body = try health.json()
        #expect(body["replica_lag_s"] is NSNull && (body["replica_clock_ahead_s"] as? Int ?? 0) > 86_400 * 365, "\(body)")
        #expect((body["error"] as? String)?.contains("ahead of this machine's clock") == true, "\(body)")
        let rows = served.get("/sources/jokes/rows?limit=1")
        #expect(rows.header("Cache-Status")?.contains("; detail=clock-ahead-") == true, "\(rows.header("Cache-Status") ?? "")")

        // Two seconds ahead: within the tolerance, 0 s behind, and healthy.
        try stamp(Timestamp.format(Date().addingTimeInterval(2)))
        let near = box.cli("--read-only", "status", "--max-lag", "1h")
        #expect(near.status == 0 && near.stdout.contains("ok: 0s behind its primary"), "\(near.stdout)")
        #expect(served.get("/healthz").status == 200)
    }
}
