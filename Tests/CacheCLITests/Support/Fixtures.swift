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
