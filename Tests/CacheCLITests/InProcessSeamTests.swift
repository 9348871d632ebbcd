import Foundation
import Testing

/// The seams that let a command's logic be tested in this process: the network a sync fetches
/// through and the refresh a read starts (`Context.fetcher`, `Context.refreshLauncher`).
@Suite(.gated) struct InProcessSeamTests {
    /// A stale read's refresh runs on the canned network, in this process: `list --wait` shows
    /// what the upstream now answers, and no `cache` process was started.
    @Test func aReadsRefreshRunsOnTheInjectedNetwork() throws {
        let upstream = CannedUpstream()
        let box = try Sandbox()
        #expect(box.cli("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "10m", upstream: upstream).status == 0)
        #expect(box.cli("sync", upstream: upstream).status == 0)
        var account = CannedUpstream.seedAccount
        account["name"] = "Refreshed Account"
        upstream.answer("/account", json: ["status": 200, "message": "OK", "body": account])
        try age(box.database, by: 3600)
        let list = box.cli("list", "bank", "--wait", "--json", upstream: upstream)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("Refreshed Account") && !list.stdout.contains("\"stale\": true"), "\(list.stdout)")
        #expect(upstream.requests == ["/account", "/account"])
        #expect(processesMentioning(box.database).isEmpty)
    }

    /// A sync's failure on the canned network is the sync's failure: an outage is 75, and the
    /// rows stay.
    @Test func aCannedOutageIsATemporaryFailure() throws {
        let upstream = CannedUpstream()
        let box = try Sandbox()
        box.cli("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", upstream: upstream)
        #expect(box.cli("sync", upstream: upstream).status == 0)
        upstream.answerEverything(status: 503)
        let failed = box.cli("sync", "--json", upstream: upstream)
        #expect(failed.status == 75, "\(failed.stderr)")
        #expect(failed.stderr.contains("HTTP 503"), "\(failed.stderr)")
        #expect(try box.cli("list", "bank", "--offline", "--json").jsonArray().count == 6)
    }
}
