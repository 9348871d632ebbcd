import Foundation
import Testing
import OfflineCache

/// A `bank` account source with a 10 min TTL, synced once and aged an hour: stale.
func addStaleBank(_ upstream: LoopbackUpstream, _ box: Sandbox) throws {
    try box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "10m")
    #expect(try box.cache("sync").status == 0)
    try age(box.database, by: 3600)
}

/// Moves every time the cache recorded `seconds` into the past, as if that long had gone by.
/// Stale under a long TTL is what a loaded machine cannot outrun: with a 1 s TTL, rows a
/// refresh just made fresh can be stale again before the read that checks them.
func age(_ path: String, by seconds: Int) throws {
    let db = try Connection(path: path)
    let tables = try db.query("SELECT name FROM sqlite_master WHERE type = 'table'") { $0.text(0) ?? "" }
    for table in tables {
        let columns = try db.query("SELECT name FROM pragma_table_info(?)", [.text(table)]) { $0.text(0) ?? "" }
        for column in columns where column.hasSuffix("_at") {
            try db.run("""
                UPDATE "\(table)" SET \(column) = strftime('%Y-%m-%dT%H:%M:%fZ', \(column), '-\(seconds) seconds')
                WHERE \(column) IS NOT NULL
                """)
        }
    }
}

/// The requests the upstream received for `path`, oldest first, with what each one sent.
func upstreamRequests(_ upstream: LoopbackUpstream, _ path: String = "/account") throws -> [[String: Any]] {
    (try upstream.stats()["requests"] as? [[String: Any]] ?? []).filter { $0["path"] as? String == path }
}

/// The upstream's default account changed three ways: Uber removed, Lyft added, and Whole
/// Foods' amount changed from 84.10 to 90.25. The balance is left as it was.
func changedAccount(_ account: [String: Any]) throws -> [String: Any] {
    var changed = account
    var transactions = try #require(account["transactions"] as? [[String: Any]])
    transactions.removeAll { $0["vendor"] as? String == "Uber" }
    transactions.append(["type": 1, "vendor": "Lyft", "amount": 12.5, "date": "2026-11-30 01:02:03"])
    let wholeFoods = try #require(transactions.firstIndex { $0["vendor"] as? String == "Whole Foods" })
    transactions[wholeFoods]["amount"] = 90.25
    changed["transactions"] = transactions
    return changed
}

/// Whether the `nobody` user can run a copy of the binary through setpriv (root, setpriv, and
/// a copy it may execute): the permission tests need it, and are skipped, as skipped, without.
let nobodyRunsTheBinary: Bool = {
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cache-nobody-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)) != nil,
          (try? FileManager.default.copyItem(atPath: Paths.cacheBinary, toPath: folder + "/cache")) != nil else { return false }
    chmod(folder, 0o755)
    chmod(folder + "/cache", 0o755)
    let run = try? RunningProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", folder + "/cache", "--version"],
                                  environment: [:]).wait().0
    return run?.status == 0
}()

/// The running processes whose command line or environment names `text` (a sandbox's database
/// path, say): how a test sees a background refresh that has started and not yet ended.
func processesMentioning(_ text: String) -> [Int32] {
    let me = getpid()
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(Int32.init).filter { pid in
        guard pid != me else { return false }
        for file in ["cmdline", "environ"] {
            if let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(file)"),
               data.range(of: Data(text.utf8)) != nil {
                return true
            }
        }
        return false
    }
}

/// The cached account of source `name` as a comparable set of "date|vendor|type|amount"
/// lines plus its header.
func cachedAccount(_ box: Sandbox, _ name: String = "bank") throws -> Set<String> {
    let transactions = try rows(box.database, "SELECT date, vendor, type, amount FROM transactions WHERE source = '\(name)'")
    let header = try rows(box.database, "SELECT name, balance FROM accounts WHERE source = '\(name)'")
    return Set(transactions.map { "\($0["date"]!)|\($0["vendor"]!)|\($0["type"]!)|\(Double($0["amount"]!)!)" }
        + header.map { "header|\($0["name"]!)|\(Double($0["balance"]!)!)" })
}

/// The account the upstream serves now, in `cachedAccount`'s form (reading it is a request too).
func servedAccount(_ upstream: LoopbackUpstream) throws -> Set<String> {
    let body = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
    let transactions = try #require(body["transactions"] as? [[String: Any]])
    return Set(transactions.map { t in
        let date = (t["date"] as! String).replacingOccurrences(of: " ", with: "T") + "Z"
        return "\(date)|\(t["vendor"]!)|\(t["type"]!)|\((t["amount"] as! NSNumber).doubleValue)"
    } + ["header|\(body["name"]!)|\((body["currentBalance"] as! NSNumber).doubleValue)"])
}

/// Runs `cache ARGUMENTS` under GNU time; returns the result and the peak RSS in KB (-1 if unread).
func measuredPeak(_ box: Sandbox, _ arguments: [String]) throws -> (RunResult, Int) {
    let result = try box.run("/usr/bin/time", ["-f", "peak-kb %M", Paths.cacheBinary] + arguments,
                             environment: ["CACHE_DB": box.database])
    let peakKB = result.stderr.components(separatedBy: "peak-kb ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    return (result, peakKB ?? -1)
}
