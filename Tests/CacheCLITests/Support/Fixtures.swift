import Foundation
import Testing

/// A `bank` account source with a 1 s TTL, synced once and left to go stale.
func addStaleBank(_ upstream: LoopbackUpstream, _ box: Sandbox) throws {
    try box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "1s")
    #expect(try box.cache("sync").status == 0)
    Thread.sleep(forTimeInterval: 1.2)
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
