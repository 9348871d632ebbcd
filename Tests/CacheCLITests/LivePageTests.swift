import Foundation
import Testing

/// The live page `cache serve` answers a browser at `/`: what it is over HTTP, and every state
/// of it in a real browser (Debian's Chromium driven by Playwright, `Tests/Browser/live_page.py`).
@Suite(.waiting) struct LivePageTests {
    static let chromium = "/usr/bin/chromium"

    /// Whether the browser test can run here; when not, the reason is printed and the test is
    /// skipped, as skipped.
    static var browserReady: Bool {
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            print("the live page's browser test needs Debian's chromium at \(chromium) (.ci/run installs it)")
            return false
        }
        return TestTools.available(for: "the live page's browser test")
    }

    @Test func aBrowserGetsOneSmallPageThatNamesNoOtherOriginAndOtherClientsTheRoutes() async throws {
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", "http://127.0.0.1:9/jokes").status == 0)
        let server = try ServeProcess(box, ["--token-env", "LIVE_PAGE_TOKEN"], environment: ["LIVE_PAGE_TOKEN": "s3cret"])
        let page = try server.get("/", headers: ["Accept": "text/html,application/xhtml+xml,*/*;q=0.8"])
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.count <= 150_000, "the page is \(page.body.count) bytes")
        let html = page.text
        #expect(html.hasPrefix("<!doctype html>") && html.contains("<script>") && html.contains("<style>"))
        // Everything inline: no script, style or image fetched, from here or anywhere.
        for reference in ["http://", "https://", "src=", "<link rel=\"stylesheet\"", "@import", "url("] {
            #expect(!html.contains(reference), "the page holds \(reference)")
        }
        let policy = try #require(page.headers["content-security-policy"])
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(page.headers["vary"] == "Accept")
        // It holds no data, so it needs no token; the routes it reads do.
        #expect(try server.get("/sources").status == 401)
        #expect(try server.get("/sources", headers: ["Authorization": "Bearer s3cret"]).status == 200)
        // Revalidated, not refetched.
        let etag = try #require(page.headers["etag"])
        #expect(try server.get("/", headers: ["Accept": "text/html", "If-None-Match": etag]).status == 304)
        // A client that does not ask for HTML gets the routes, as before.
        let index = try server.get("/", headers: ["Authorization": "Bearer s3cret"])
        #expect(index.headers["content-type"] == "application/json")
        #expect((try index.json()["routes"] as? [String])?.contains("GET /events") == true)
        #expect(try server.request("POST", "/", headers: ["Accept": "text/html"]).status == 405)
    }

    @Test func theRowsTheLivePageReadsCarryTheAccountAndTheViewsColumns() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account").status == 0)
        #expect(try await box.cache("sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items", "--key", "id").status == 0)
        #expect(try await box.cache("sync").status == 0)
        let server = try ServeProcess(box)
        let bank = try server.get("/sources/bank/rows?limit=1").json()
        let header = try #require(bank["header"] as? [String: Any])
        #expect(header["name"] as? String == "Jane Appleseed" && header["balance"] as? Double == 1234.56 && header["stale"] as? Bool == false)
        #expect(try server.get("/sources/items/rows?limit=1").json()["header"] == nil)
        let record = try #require((try server.get("/sources/items/rows?limit=1").json()["rows"] as? [[String: Any]])?.first)
        #expect(record["record"] != nil && record["owner__login"] == nil)
        // `view=1` is gone (every row is one shape); asked for, it says where the columns are.
        for view in ["1", "maybe"] {
            let refused = try server.get("/sources/items/rows?view=" + view)
            #expect(refused.status == 400)
            #expect((try refused.json()["error"] as? String)?.contains("rows.csv gives the view's columns") == true)
        }
        #expect(try server.get("/sources/items/rows.csv").text.hasPrefix("key,"))
    }

    @Test(.enabled(if: browserReady, "Chromium or Playwright is missing here (the reason is printed above)"))
    func everyStateOfThePageInARealBrowser() async throws {
        let upstream = try LoopbackUpstream(), failing = try LoopbackUpstream()
        let box = try Sandbox()
        func add(_ arguments: String...) async throws {
            let added = try await box.cache(["sources", "add"] + arguments + ["--ttl", "1h"])
            #expect(added.status == 0, "\(added.stderr)")
        }
        // Stale and failing: synced once, aged past its TTL, and its upstream now answers 500.
        try await add("items", "--kind", "json", "--url", failing.baseURL + "/api/items", "--key", "id", "--search", "on")
        #expect(try await box.cache("sync", "items").status == 0)
        try age(box.database, by: 7200)
        try failing.control(["status": 500])
        try await add("bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        try await add("jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        try await add("vault", "--kind", "json", "--url", upstream.baseURL + "/api/items", "--key", "id")
        // Never synced: its URL names a variable nobody set, so no refresh starts.
        try await add("pending", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten?key=${LIVE_PAGE_NEVER_SET}")
        // Writable: local edits are made in the page, pushed, and met with a conflict.
        try upstream.tasks(["tasks": [["id": 1, "title": "one", "done": false], ["id": 2, "title": "two", "done": false]]])
        try await add("tasks", "--kind", "json", "--url", upstream.baseURL + "/api/tasks", "--key", "id",
                      "--write-url", upstream.baseURL + "/api/tasks/{key}")
        #expect(try await box.cache("sync", "bank", "jokes", "vault", "tasks").status == 0)
        // Held: the vault's upstream now lists 10 of its 300 records.
        try upstream.setItems(count: 10)
        #expect(try await box.cache("sync", "vault").status == 65)

        let python = try TestTools.python.get()
        let shots = Paths.repository + "/.build/live-page"
        let run = try await box.run(python, [Paths.repository + "/Tests/Browser/live_page.py"], environment: [
            "CACHE_BIN": Paths.cacheBinary, "CACHE_DB": box.database, "UPSTREAM": upstream.baseURL,
            "CHROMIUM": Self.chromium, "SHOTS": shots,
        ])
        try #require(run.status == 0, "\(run.stderr)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        print("live page: first rows painted \(figures["first_rows_ms"] ?? "?") ms after the navigation began (median of 5, debug build: \(figures["first_rows_ms_all"] ?? "?")); a sync by another process redrawn in \(figures["redraw_after_sync_s"] ?? "?") s; screenshots in .build/live-page")
        for shot in ["wide.png", "phone.png"] {
            #expect(FileManager.default.fileExists(atPath: shots + "/" + shot), "no screenshot \(shot)")
        }
    }
}
