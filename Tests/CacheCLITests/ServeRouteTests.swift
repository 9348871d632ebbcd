import Foundation
import Testing
@testable import CacheServer
@testable import OfflineCache

/// `cache serve`'s routes in this process, through the route table (`CacheServer.respond`), on
/// a canned upstream: no socket, no binary. The socket's own behaviour (limits, framing on the
/// wire, SIGTERM, nginx, the browser) stays in `ServeTests` and beside it.
@Suite(.gated) struct ServeRouteTests {
    /// Each route's own test, by the route table's id: a route added without one fails
    /// `everyRouteHasATest`.
    static let routeTests: [String: @Sendable (InProcessServer) throws -> Void] = [
        "GET /": { served in
            let routes = try served.get("/").json()["routes"] as? [String]
            #expect(routes == CacheServer.routes.map(\.id))
            let page = served.get("/", headers: [("Accept", "text/html")])
            #expect(page.status == 200 && page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(served.request("POST", "/", headers: [("Accept", "text/html")]).status == 405)
        },
        "GET /openapi.json": { served in
            let document = try served.get("/openapi.json").json()
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            for route in CacheServer.routes {
                #expect(paths[route.path]?[route.method.rawValue.lowercased()] != nil, "\(route.id) is not described")
            }
        },
        "GET /healthz": { served in
            let health = served.get("/healthz")
            #expect(health.status == 200 && health.header("Cache-Control") == "no-store", "\(health.text)")
        },
        "GET /metrics": { served in
            _ = served.get("/sources")
            let text = served.get("/metrics").text
            #expect(text.contains("cache_rows{source=\"jokes\"} 10"))
            #expect(text.contains("cache_http_requests_total{route=\"GET /sources\",method=\"GET\",status=\"200\"} 1"), "\(text)")
            #expect(text.contains("# TYPE cache_http_request_duration_seconds histogram"))
            // A made-up method is counted as "other": no client grows the exposition at will.
            _ = served.request("BREW", "/sources")
            let after = served.get("/metrics").text
            #expect(after.contains("method=\"other\",status=\"405\"") && !after.contains("BREW"), "\(after)")
        },
        "POST /session": { served in
            let opened = served.request("POST", "/session")
            let cookie = try #require(opened.header("Set-Cookie"))
            #expect(opened.status == 204 && cookie.hasPrefix("cache_session=") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        },
        "GET /events": { served in
            let stream = served.get("/events")
            #expect(stream.status == 200 && stream.header("Content-Type") == "text/event-stream")
            guard case .stream(let next) = stream.body else { Issue.record("not a stream"); return }
            let first = String(decoding: try next() ?? [], as: UTF8.self)
            #expect(first.hasPrefix(": cache events\nretry: 2000\nid: "), "\(first)")
        },
        "GET /sources": { served in
            let sources = served.get("/sources")
            #expect(sources.status == 200)
            let names = try (JSONSerialization.jsonObject(with: Data(sources.bytes)) as? [[String: Any]])?.compactMap { $0["source"] as? String }
            #expect(names == ["bank", "jokes"])
            let etag = try #require(sources.header("ETag"))
            #expect(served.get("/sources", headers: [("If-None-Match", etag)]).status == 304)
        },
        "GET /sources/{name}": { served in
            let rows = try served.get("/sources/jokes").json()["rows"] as? Int
            #expect(rows == 10)
            #expect(served.get("/sources/nope").status == 404)
        },
        "GET /sources/{name}/rows": { served in
            let rows = try served.get("/sources/jokes/rows?limit=3").json()
            #expect((rows["rows"] as? [Any])?.count == 3 && rows["stale"] as? Bool == false)
            #expect(served.get("/sources/jokes/rows?limit=0").status == 400)
        },
        "GET /sources/{name}/rows.csv": { served in
            let csv = served.get("/sources/jokes/rows.csv")
            guard case .stream(let next) = csv.body else { Issue.record("not a stream"); return }
            var text = ""
            while let bytes = try next() { text += String(decoding: bytes, as: UTF8.self) }
            #expect(text.split(separator: "\n").count == 11 && text.hasPrefix("id,"), "\(text)")
            #expect(csv.header("ETag") == nil, "a stream's stale flags are not counted: it has no validator")
        },
        "GET /sources/{name}/rows.ndjson": { served in
            let lines = served.get("/sources/jokes/rows.ndjson")
            guard case .stream(let next) = lines.body else { Issue.record("not a stream"); return }
            var count = 0
            while let bytes = try next() { count += bytes.filter { $0 == 0x0A }.count }
            #expect(count == 10)
        },
        "GET /sources/{name}/rows/{key}/log": { served in
            let log = served.get("/sources/jokes/rows/1/log")
            #expect(log.status == 200 && log.text.hasPrefix("["), "\(log.text)")
        },
        "GET /sources/{name}/rows/{key}": { served in
            let row = try served.get("/sources/jokes/rows/1").json()
            #expect(row["key"] as? String == "1" && (row["record"] as? [String: Any])?["id"] as? Int == 1, "\(row)")
            #expect(served.get("/sources/jokes/rows/999").status == 404)
        },
        "GET /sources/{name}/changes": { served in
            #expect(served.get("/sources/jokes/changes").status == 200)
            #expect(served.get("/sources/jokes/changes?since=x").status == 400)
        },
        "PATCH /sources/{name}/rows/{key}": { served in
            served.addTasks()
            let queued = served.send("PATCH", "/sources/tasks/rows/1", #"{"done": true}"#)
            let edit = try queued.json()
            #expect(queued.status == 202 && edit["state"] as? String == "queued" && edit["op"] as? String == "patch", "\(queued.text)")
            #expect(queued.header("Location") == "/outbox/\(edit["id"] as! String)")
            let row = try served.get("/sources/tasks/rows/1").json()
            #expect(row["pending"] as? Bool == true && (row["record"] as? [String: Any])?["done"] as? Bool == true, "\(row)")
            // If-Match (RFC 9110 §13.1.1): the row's version as the last answer gave it, else 412.
            let tag = try #require(queued.header("ETag"))
            #expect(served.send("PATCH", "/sources/tasks/rows/1", #"{"title": "x"}"#, headers: [("If-Match", "\"other\"")]).status == 412)
            #expect(served.send("PATCH", "/sources/tasks/rows/1", #"{"title": "x"}"#, headers: [("If-Match", "W/" + tag)]).status == 412, "a weak tag never matches")
            #expect(served.send("PATCH", "/sources/tasks/rows/1", #"{"title": "x"}"#, headers: [("If-Match", tag)]).status == 202)
            // Idempotency-Key (draft §2.6, §2.7): a retry gets the first answer; another body 422.
            let key = [("Idempotency-Key", "\"abc-1\"")]
            let first = served.send("PATCH", "/sources/tasks/rows/2", #"{"done": true}"#, headers: key)
            let again = served.send("PATCH", "/sources/tasks/rows/2", #"{"done": true}"#, headers: key)
            #expect(first.status == 202 && again.status == 202 && again.text == first.text, "\(first.text) \(again.text)")
            #expect(again.header("Location") == first.header("Location") && again.header("ETag") == first.header("ETag") && again.header("ETag") != nil)
            #expect(served.send("PATCH", "/sources/tasks/rows/2", #"{"done": false}"#, headers: key).status == 422)
            #expect(served.send("PATCH", "/sources/tasks/rows/2", #"{"done": true}"#, headers: [("Idempotency-Key", "abc")]).status == 400)
            #expect(try served.get("/outbox").jsonArray().count == 3)
            // Not JSON, not JSON-typed, another origin's page, an unknown row: nothing queued.
            #expect(served.send("PATCH", "/sources/tasks/rows/1", "[1]").status == 400)
            #expect(served.request("PATCH", "/sources/tasks/rows/1", headers: [("Content-Type", "text/plain")], body: "{}").status == 415)
            #expect(served.send("PATCH", "/sources/tasks/rows/1", "{}", headers: [("Origin", "https://evil.example"), ("Sec-Fetch-Site", "cross-site")]).status == 403)
            #expect(served.send("PATCH", "/sources/tasks/rows/9", "{}").status == 404)
            #expect(served.send("PATCH", "/sources/jokes/rows/1", "{}").status == 400, "a jokes source cannot be edited")
            #expect(try served.get("/outbox").jsonArray().count == 3)
        },
        "PUT /sources/{name}/rows/{key}": { served in
            served.addTasks()
            let put = served.send("PUT", "/sources/tasks/rows/1", #"{"id": 1, "title": "whole"}"#)
            let op = try put.json()["op"] as? String
            #expect(put.status == 202 && op == "replace", "\(put.text)")
            #expect(served.send("PUT", "/sources/tasks/rows/1", #"{"id": 5, "title": "whole"}"#).status == 400, "an edit cannot change the key")
            // Prefer: wait=N sends it now and answers with what the upstream made of it.
            let waited = served.send("PUT", "/sources/tasks/rows/1", #"{"id": 1, "title": "one", "done": false}"#, headers: [("Prefer", "wait=5")])
            let state = try waited.json()["state"] as? String
            #expect(waited.status == 200 && waited.header("Preference-Applied") == "wait=5" && state == "applied", "\(waited.text)")
            // Both edits of the row went, each read first (no ETag known), then written.
            #expect(served.upstream.requests.filter { $0 == "/tasks/1" }.count == 4)
        },
        "DELETE /sources/{name}/rows/{key}": { served in
            served.addTasks()
            #expect(served.request("DELETE", "/sources/tasks/rows/2").status == 202)
            let row = try served.get("/sources/tasks/rows/2").json()
            #expect(row["pending"] as? Bool == true, "shown pending removal until it applies")
        },
        "POST /sources/{name}/rows": { served in
            served.addTasks()
            let made = served.send("POST", "/sources/tasks/rows", #"{"title": "three"}"#)
            let key = try #require(try made.json()["key"] as? String)
            #expect(made.status == 202 && key.hasPrefix("new-"), "\(made.text)")
            #expect(try served.get("/sources/tasks/rows/" + key).json()["pending"] as? Bool == true)
            #expect(served.send("POST", "/sources/tasks/rows", "\"text\"").status == 400)
        },
        "GET /outbox": { served in
            served.addTasks()
            #expect(try served.get("/outbox").jsonArray().isEmpty)
            _ = served.send("PATCH", "/sources/tasks/rows/1", #"{"done": true}"#)
            let edits = try served.get("/outbox?source=tasks").jsonArray()
            #expect(edits.count == 1 && edits[0]["source"] as? String == "tasks" && edits[0]["state"] as? String == "queued")
            #expect(served.get("/outbox?source=nope").status == 404)
        },
        "GET /outbox/{id}": { served in
            served.addTasks()
            let id = try #require(try served.send("PATCH", "/sources/tasks/rows/1", #"{"done": true}"#).json()["id"] as? String)
            #expect(try served.get("/outbox/" + id).json()["key"] as? String == "1")
            #expect(served.get("/outbox/nothing-like-it").status == 404)
        },
        "POST /outbox/{id}/retry": { served in
            // No read first: the write itself is answered 422.
            served.addTasks(conflictCheck: "none")
            served.upstream.answer("/tasks/2", status: 422)
            let rejected = try served.send("PATCH", "/sources/tasks/rows/2", #"{"done": true}"#, headers: [("Prefer", "wait=5")]).json()
            #expect(rejected["state"] as? String == "rejected" && rejected["answer_status"] as? Int == 422, "\(rejected)")
            let retried = served.request("POST", "/outbox/\(rejected["id"] as! String)/retry")
            let state = try retried.json()["state"] as? String
            #expect(retried.status == 200 && state == "queued", "\(retried.text)")
            #expect(served.request("POST", "/outbox/nothing-like-it/retry").status == 404)
        },
        "POST /outbox/{id}/drop": { served in
            served.addTasks()
            let id = try #require(try served.send("PATCH", "/sources/tasks/rows/1", #"{"done": true}"#).json()["id"] as? String)
            let dropped = served.request("POST", "/outbox/\(id)/drop")
            let state = try dropped.json()["state"] as? String
            #expect(dropped.status == 200 && state == "dropped", "\(dropped.text)")
            #expect(served.request("POST", "/outbox/\(id)/drop").status == 400, "dropped already")
            #expect(try served.get("/sources/tasks/rows/1").json()["pending"] as? Bool == false)
        },
        "POST /sources/{name}/rows/{key}/resolve": { served in
            served.addTasks()
            #expect(served.request("POST", "/sources/tasks/rows/1/resolve?take=local").status == 400, "no conflict")
            // The upstream's record changed since the sync: the push reads it first, and finds it.
            served.upstream.answer("/tasks/1", json: ["id": 1, "title": "theirs", "done": false])
            let conflict = try served.send("PATCH", "/sources/tasks/rows/1", #"{"done": true}"#, headers: [("Prefer", "wait=5")]).json()
            #expect(conflict["state"] as? String == "conflict", "\(conflict)")
            #expect(served.request("POST", "/sources/tasks/rows/1/resolve").status == 400, "take= is needed")
            let resolved = served.request("POST", "/sources/tasks/rows/1/resolve?take=remote")
            let state = try resolved.json()["state"] as? String
            #expect(resolved.status == 200 && state == "dropped", "\(resolved.text)")
            let row = try served.get("/sources/tasks/rows/1").json()
            #expect((row["record"] as? [String: Any])?["title"] as? String == "theirs" && row["pending"] as? Bool == false, "\(row)")
        },
        "POST /sources/{name}/refresh": { served in
            // Just synced: within the refresh interval, the last sync is the answer.
            let recent = served.request("POST", "/sources/jokes/refresh")
            let outcome = try recent.json()["outcome"] as? String
            #expect(recent.status == 200 && outcome == "updated", "\(recent.text)")
            #expect(served.upstream.requests.filter { $0 == "/jokes/ten" }.count == 1)
        },
    ]

    @Test(arguments: CacheServer.routes.map(\.id))
    func everyRouteHasATest(_ route: String) throws {
        let test = try #require(Self.routeTests[route], "the route \(route) has no test in ServeRouteTests.routeTests")
        try test(try InProcessServer())
    }

    /// RFC 9111 §4.2.1 and §4.2.3: a cache keeps a copy fresh while `max-age` exceeds its
    /// current age, which starts from `Age`; so `max-age − Age` must be the TTL left, at every
    /// moment, and the body's stale flags must agree with it. RFC 9211 §2.4: `ttl` the same.
    @Test func freshnessReadsAsTheRFCsArithmeticAtEveryMoment() throws {
        let ttl = 600
        let served = try InProcessServer(ttl: "10m")
        func check(_ moment: String, left expected: Int) throws -> HTTPResponse {
            let reply = served.get("/sources/jokes/rows")
            let control = try #require(reply.header("Cache-Control"))
            let maxAge = try #require(Int(control.split(separator: ",")[0].dropFirst("max-age=".count)), "\(control)")
            let age = try #require(reply.header("Age").flatMap { Int($0) })
            #expect(maxAge == ttl, "\(moment): \(control)")
            let left = maxAge - age  // the copy's freshness_lifetime − current_age at receipt
            #expect(abs(left - expected) <= 1, "\(moment): max-age \(maxAge), Age \(age), expected \(expected) left")
            #expect(reply.header("Cache-Status")?.contains("ttl=\(left)") == true, "\(moment): \(reply.header("Cache-Status") ?? "")")
            let body = try reply.json()
            let flags = (body["rows"] as? [[String: Any]])?.compactMap { $0["stale"] as? Bool } ?? []
            #expect(flags.count == 10 && flags.allSatisfy { $0 == (left <= 0) } && body["stale"] as? Bool == (left <= 0), "\(moment): \(flags)")
            return reply
        }
        // (`age` moves the stored times back, the confirmation's too: the validators of these
        // moments differ for that reason alone, so `aRowCrossingItsTTLChangesTheValidator`
        // tests the clock's own crossing.)
        let synced = try check("just synced", left: ttl)
        try age(served.box.database, by: ttl / 2)
        let half = try check("half the TTL", left: ttl / 2)
        #expect(served.get("/sources/jokes/rows", headers: [("If-None-Match", half.header("ETag")!)]).status == 304)
        try age(served.box.database, by: ttl / 2 + 30)
        let past = try check("past the TTL", left: -30)
        // That stale read started a refresh; the canned upstream answers the same ten jokes.
        try poll(seconds: 10) { served.server.refresher.flight("jokes") == nil && served.upstream.requests.count == 3 }
        let refreshed = try check("after an unchanged refresh", left: ttl)
        #expect(refreshed.header("ETag") != past.header("ETag") && refreshed.header("ETag") != synced.header("ETag"))
        #expect(served.get("/sources/jokes/rows", headers: [("If-None-Match", refreshed.header("ETag")!)]).status == 304)
        // RFC 9110 §13.1.3: If-Modified-Since is answered as If-None-Match is.
        let since = try #require(refreshed.header("Last-Modified"))
        #expect(served.get("/sources/jokes/rows", headers: [("If-Modified-Since", since)]).status == 304)
        #expect(served.get("/sources/jokes/rows", headers: [("If-Modified-Since", "Thu, 01 Jan 2026 00:00:00 GMT")]).status == 200)
    }

    /// The bug a browser showed: a copy made while the rows were fresh, revalidated once they
    /// crossed their TTL with no sync between, was answered 304, and the page kept saying
    /// "fresh". The clock alone moves here (a 2 s TTL, waited for through the source's own
    /// status, which starts no refresh).
    @Test func aRowCrossingItsTTLChangesTheValidator() throws {
        let served = try InProcessServer(ttl: "2s")
        let fresh = served.get("/sources/jokes/rows")
        #expect(try fresh.json()["stale"] as? Bool == false)
        let etag = try #require(fresh.header("ETag"))
        #expect(served.get("/sources/jokes/rows", headers: [("If-None-Match", etag)]).status == 304)
        try poll(seconds: 10) { try served.get("/sources/jokes").json()["stale"] as? Bool == true }
        let crossed = served.get("/sources/jokes/rows", headers: [("If-None-Match", etag)])
        #expect(crossed.status == 200 && crossed.header("ETag") != etag, "a 304 would replay 'stale: false'")
        #expect(try crossed.json()["stale"] as? Bool == true)
        #expect(served.get("/sources/jokes/rows/1", headers: [("If-None-Match", etag)]).status == 200)
    }

    /// A page asked for again is the page kept (`PageMemo`) only while it says what its rows
    /// say now: a sync, a local edit and the clock each make it again, at once.
    @Test func aKeptPageIsGivenOnlyWhileItsRowsSayTheSame() throws {
        let served = try InProcessServer(ttl: "1h")
        served.addTasks()
        // Joke 3 was last seen 0.6 s short of the TTL, the others now: the source stays fresh
        // while that one row crosses, which no version of the rows shows.
        let db = try Connection(path: served.box.database)
        try db.run("UPDATE jokes SET seen_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-3599.4 seconds') WHERE id = 3")
        try db.run("UPDATE sync_state SET confirmed_at = NULL WHERE source = 'jokes'")
        func staleJokes(_ reply: HTTPResponse) throws -> [String] {
            try (reply.json()["rows"] as? [[String: Any]] ?? []).filter { $0["stale"] as? Bool == true }.compactMap { $0["key"] as? String }
        }
        let first = served.get("/sources/jokes/rows")
        #expect(try staleJokes(first) == [])
        // A page the clock picks rows for (stale ones) is made each time: none yet.
        #expect(try staleJokes(served.get("/sources/jokes/rows?stale=1")) == [])
        #expect(served.get("/sources/jokes/rows").text == first.text && served.server.pages.made == 1, "asked again, the page is the one kept")
        var asked = 0
        try poll(seconds: 10) {
            asked += 1
            return try staleJokes(served.get("/sources/jokes/rows")) == ["3"]
        }
        let crossed = served.get("/sources/jokes/rows")
        let sourceStale = try served.get("/sources/jokes").json()["stale"] as? Bool
        #expect(crossed.header("ETag") != first.header("ETag") && sourceStale == false)
        // Made again when the row crossed its TTL; once more when a request landed in the
        // millisecond of the crossing, which SQLite's clock (whole milliseconds) still calls fresh
        // and the kept page's bound (`freshUntil`, the crossing itself) already does not.
        #expect((2...3).contains(served.server.pages.made), "made again once, when the row crossed its TTL (\(asked) requests, \(served.server.pages.made) made)")
        #expect(try staleJokes(served.get("/sources/jokes/rows?stale=1")) == ["3"], "the stale rows' page shows the row that crossed")

        // A local edit and a sync show at once.
        #expect(served.get("/sources/tasks/rows").text.contains(#""title":"one""#))
        #expect(served.send("PATCH", "/sources/tasks/rows/1", #"{"title": "edited"}"#, headers: [("Origin", "http://127.0.0.1:8765")]).status == 202)
        let edited = try served.get("/sources/tasks/rows").json()["rows"] as? [[String: Any]] ?? []
        #expect((edited.first?["record"] as? [String: Any])?["title"] as? String == "edited" && edited.first?["pending"] as? Bool == true, "\(edited)")
        served.upstream.answer("/tasks", json: [["id": 1, "title": "one", "done": false], ["id": 2, "title": "two", "done": true]])
        #expect(served.box.cli("sync", "tasks", "--no-push", upstream: served.upstream).status == 0)
        let synced = try served.get("/sources/tasks/rows").json()["rows"] as? [[String: Any]] ?? []
        #expect((synced.last?["record"] as? [String: Any])?["done"] as? Bool == true, "\(synced)")
    }

    /// Issue 52's hit path: a kept page is given without a reader, a transaction or a query
    /// while the file's newest commit (its WAL index) is the one the page was read after. Any
    /// commit, by any connection, sends the next request to the file; a sync shows at once; a
    /// file moved aside is never answered from memory.
    @Test func aKeptPageIsGivenWithoutReadingTheFileUntilAnythingIsWritten() throws {
        let served = try InProcessServer(ttl: "1h")
        served.addTasks()
        let first = served.get("/sources/tasks/rows?limit=5")
        #expect(served.server.pages.given == 0, "the first is read from the file")
        let again = served.get("/sources/tasks/rows?limit=5")
        #expect(served.server.pages.given == 1, "asked again, given without reading the file")
        #expect(again.status == 200 && again.text == first.text && again.header("ETag") == first.header("ETag")
                && again.header("Cache-Control") == first.header("Cache-Control") && again.header("Last-Modified") == first.header("Last-Modified"))
        // RFC 9111 §4.2.3: its Age is the seconds since the rows were confirmed, now, as the file's own path says.
        let age = try #require(again.header("Age").flatMap(Int.init))
        #expect(age >= Int(first.header("Age") ?? "") ?? .max && age <= 60, "\(again.headers)")
        // RFC 9110 §13.1.2: a conditional request naming its tag is a 304 on the same path.
        let revalidated = served.get("/sources/tasks/rows?limit=5", headers: [("If-None-Match", first.header("ETag") ?? "")])
        #expect(revalidated.status == 304 && served.server.pages.given == 2)
        #expect(served.get("/sources/tasks/rows?limit=4").status == 200 && served.server.pages.given == 2, "another query is another page")

        // A commit that changes nothing this page says (another source's sync) still sends the
        // next request to the file: the hit path knows commits, not what they changed. The one after is given again.
        #expect(served.box.cli("sync", "jokes", upstream: served.upstream).status == 0)
        #expect(served.get("/sources/tasks/rows?limit=5").text == first.text && served.server.pages.given == 2)
        #expect(served.get("/sources/tasks/rows?limit=5").text == first.text && served.server.pages.given == 3)

        // A sync that changes the rows shows at once.
        served.upstream.answer("/tasks", json: [["id": 1, "title": "one, changed", "done": false], ["id": 2, "title": "two", "done": false]])
        #expect(served.box.cli("sync", "tasks", "--no-push", upstream: served.upstream).status == 0)
        let synced = served.get("/sources/tasks/rows?limit=5")
        #expect(synced.text.contains("one, changed") && served.server.pages.given == 3, "\(synced.text)")
        #expect(served.get("/sources/tasks/rows?limit=5").text == synced.text && served.server.pages.given == 4)

        // The file moved aside: nothing is answered from memory.
        #expect(rename(served.box.database, served.box.database + ".aside") == 0)
        let gone = served.get("/sources/tasks/rows?limit=5")
        #expect(gone.status == 503 && served.server.pages.given == 4, "\(gone.status) \(gone.text)")
    }

    /// The hit path's clock (`PageMemo.hit`): a kept page is given while its source is fresh
    /// and none of its rows has crossed its TTL, and not a moment after either crossing.
    @Test func aKeptPageIsGivenOnlyWhileTheClockSaysItIsFresh() throws {
        let served = try InProcessServer(ttl: "1h")
        let index = try #require(WALIndex(path: served.box.database))
        let commit = try #require(index.newestCommit())
        let confirmed = Date(timeIntervalSince1970: 1_800_000_000)
        var version = try CacheReader(try CacheDatabase(path: served.box.database, access: .read))
            .rowsVersion(of: try SourceStore(try CacheDatabase(path: served.box.database, access: .read)).named("jokes"))
        version.ttlSeconds = 3600
        let memo = PageMemo()
        func keep(freshUntil: Date?) {
            memo.keep(PageMemo.Hit(page: PageMemo.Page(body: Array("{}".utf8), staleRows: 0, next: nil, freshUntil: freshUntil),
                                   commit: commit, file: index.identity, source: "jokes", version: version, confirmed: confirmed, etag: "W/\"x\""), under: "/rows?")
        }
        keep(freshUntil: nil)
        #expect(memo.hit("/rows?", commit: commit, of: index.identity, now: confirmed.addingTimeInterval(3599.9))?.version.ageSeconds == 3599)
        #expect(memo.hit("/rows?", commit: commit, of: index.identity, now: confirmed.addingTimeInterval(3600.001)) == nil, "the source is stale: its read starts a refresh")
        keep(freshUntil: confirmed.addingTimeInterval(60))
        #expect(memo.hit("/rows?", commit: commit, of: index.identity, now: confirmed.addingTimeInterval(59.9)) != nil)
        #expect(memo.hit("/rows?", commit: commit, of: index.identity, now: confirmed.addingTimeInterval(60)) == nil, "a row of the page crossed its TTL")
        #expect(memo.hit("/other?", commit: commit, of: index.identity, now: confirmed) == nil)
        // Any write moves the commit.
        try Connection(path: served.box.database).run("UPDATE sources SET name = name WHERE name = 'jokes'")
        #expect(index.newestCommit() != commit)
    }

    /// Every kind's row in the JSON answers is one shape, `{"key", "seen_at", "stale",
    /// "record"}` (issue 52): the key a string, the record as upstream sent it, its booleans
    /// JSON's; the page, the single row and JSON Lines alike. No field ticks with the clock.
    @Test func everyKindsRowIsOneShape() throws {
        let served = try InProcessServer()
        try served.box.syncedFileSource("items", #"[{"id": 7, "done": true, "tags": ["a"], "owner": {"login": "octocat"}, "score": 1.5}]"#)
        let expected: [String: (key: String, record: [String: Any])] = [
            "jokes": ("1", ["id": 1, "type": "general"]),
            "items": ("7", ["id": 7, "done": true, "score": 1.5]),
        ]
        for source in ["jokes", "bank", "items"] {
            let page = try served.get("/sources/\(source)/rows?limit=1").json()
            let row = try #require((page["rows"] as? [[String: Any]])?.first, "\(source): \(page)")
            #expect(Set(row.keys) == ["key", "seen_at", "stale", "pending", "record"], "\(source): \(row)")
            let key = try #require(row["key"] as? String, "\(source): the key is a string")
            #expect(row["stale"] as? Bool == false && (row["seen_at"] as? String).flatMap(Timestamp.parse) != nil)
            let record = try #require(row["record"] as? [String: Any], "\(source): \(row)")
            if let (wanted, fields) = expected[source] {
                #expect(key == wanted)
                for (name, value) in fields { #expect((record[name] as? NSObject)?.isEqual(value) == true, "\(source).\(name): \(record)") }
            } else {
                #expect(record["vendor"] is String && record["amount"] is Double && record["id"] as? String == key, "\(record)")
            }
            // One row alone, and each line of JSON Lines, is the same object.
            let one = try served.get("/sources/\(source)/rows/" + key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!).json()
            func same(_ a: [String: Any], _ b: [String: Any]) throws -> Bool {
                try JSONSerialization.data(withJSONObject: a, options: .sortedKeys) == JSONSerialization.data(withJSONObject: b, options: .sortedKeys)
            }
            #expect(try same(one, row), "\(source): \(one) ≠ \(row)")
            let line = try #require(served.streamed("/sources/\(source)/rows.ndjson?limit=1").split(separator: "\n").first)
            let streamed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(try same(streamed, row), "\(source): \(streamed) ≠ \(row)")
        }
        // A JSON boolean stays one: `true`, not SQLite's `1`.
        #expect(served.get("/sources/items/rows").text.contains(#""done":true"#))
        #expect(!served.get("/sources/bank/rows").text.contains("age_s"), "an age in the body ticks with the clock")
    }

    /// `/sources` and `/metrics` count a source's rows and stale rows from a census taken once
    /// for the rows' version (issue 52: the same cost on a million rows as on ten), not per
    /// request; and the census counts what the table does (`status`, every row read): rows seen
    /// at two moments, one past the TTL, and every row at a later moment.
    @Test func sourcesCountRowsFromACensusTakenOnceARowsVersion() throws {
        let served = try InProcessServer(ttl: "1h")
        let upstream = served.upstream, box = served.box
        upstream.answer("/items", json: [["id": 1, "v": "a"], ["id": 2, "v": "b"]])
        #expect(box.cli("sources", "add", "items", "--kind", "json", "--key", "id", "--mode", "merge", "--ttl", "1h",
                        "--url", upstream.baseURL + "/items", upstream: upstream).status == 0)
        #expect(box.cli("sync", "items", upstream: upstream).status == 0)
        try age(box.database, by: 7200)
        upstream.answer("/items", json: [["id": 2, "v": "b2"], ["id": 3, "v": "c"]])
        #expect(box.cli("sync", "items", upstream: upstream).status == 0)

        func counted(_ target: String) throws -> (rows: Int?, stale: Int?) {
            let status = try served.get(target).json()
            return (status["rows"] as? Int, status["stale_rows"] as? Int)
        }
        let table = try #require(try box.cli("status", "items", "--json").jsonArray().first)
        #expect(table["rows"] as? Int == 3 && table["stale_rows"] as? Int == 1, "\(table)")
        #expect(try counted("/sources/items") == (3, 1))
        #expect(served.get("/sources").status == 200)  // every source's census, taken
        let taken = served.server.censuses.taken
        for _ in 0..<5 { #expect(try counted("/sources/items") == (3, 1)) }
        #expect(served.get("/metrics").text.contains("cache_stale_rows{source=\"items\"} 1"))
        #expect(served.server.censuses.taken == taken, "a request counted the rows again")

        // A sync that changes the rows is a new version: counted again, once.
        upstream.answer("/items", json: [["id": 4, "v": "d"]])
        #expect(box.cli("sync", "items", upstream: upstream).status == 0)
        #expect(try counted("/sources/items") == (4, 1))
        #expect(try counted("/sources/items") == (4, 1))
        #expect(served.server.censuses.taken == taken + 1)

        // A merge sync that changes nothing still marks the rows it saw (their seen_at), so its
        // run is a new version too: two hours on, the one row returned again is fresh.
        try age(box.database, by: 7200)
        upstream.answer("/items", json: [["id": 3, "v": "c"], ["id": 4, "v": "d"]])
        #expect(box.cli("sync", "items", "--json", upstream: upstream).stdout.contains("\"unchanged\""))
        let unchanged = try #require(try box.cli("status", "items", "--json").jsonArray().first)
        #expect(unchanged["stale_rows"] as? Int == 2, "\(unchanged)")
        #expect(try counted("/sources/items") == (4, 2))

        // Past the TTL of every row, the census's count is the table's two hours on.
        let database = try CacheDatabase(path: box.database, access: .read)
        let source = try SourceStore(database).named("items")
        let census = try RowCensus(database, of: source, version: "")
        #expect(census.staleRows(confirmedAt: nil, ttlSeconds: 3600, at: Date().addingTimeInterval(7200)) == 4)
        try age(box.database, by: 7200)
        let later = try #require(try box.cli("status", "items", "--json").jsonArray().first)
        #expect(later["stale_rows"] as? Int == 4, "\(later)")
    }

    /// A `Last-Event-ID` ahead of the newest run (a client that outlived a restore) is a new
    /// client's: its stream starts at a fresh cursor instead of waiting for runs never to come.
    @Test func aCursorAheadOfTheHistoryIsANewClients() throws {
        let served = try InProcessServer()
        func first(_ lastEventID: String?) throws -> String {
            let stream = served.get("/events", headers: lastEventID.map { [("Last-Event-ID", $0)] } ?? [])
            guard case .stream(let next) = stream.body else { throw TestFailure("not a stream") }
            return String(decoding: try next() ?? [], as: UTF8.self)
        }
        let fresh = try first(nil)
        let newest = try #require(fresh.split(separator: "\n").first { $0.hasPrefix("id: ") })
        #expect(try first("999").contains(newest + "\n"), "a cursor from the future resumes nothing")
        #expect(try first("1").contains("event: updated"), "a cursor within the history replays the runs after it")
    }

    /// With a token, a browser's page posts it once to `/session` and follows `/events` (which
    /// `EventSource` cannot send a header to) with the cookie it gets back; a made-up cookie, or
    /// a session opened with no token, lets nothing in.
    @Test func aSessionCookieStandsForTheTokenOnAServerWithOne() throws {
        let served = try InProcessServer { $0.token = "s3cret"; $0.cors = ["http://localhost:5173"] }
        #expect(served.request("POST", "/session").status == 401)
        #expect(served.request("POST", "/session", headers: [("Cookie", "cache_session=made-up")]).status == 401)
        let opened = served.request("POST", "/session", headers: [("Authorization", "Bearer s3cret"), ("Origin", "http://localhost:5173")])
        #expect(opened.status == 204 && opened.header("Access-Control-Allow-Credentials") == "true")
        let cookie = try #require(opened.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        #expect(served.get("/events", headers: [("Cookie", cookie)]).status == 200)
        let rows = served.get("/sources/jokes/rows", headers: [("Cookie", "theme=dark; " + cookie)])
        #expect(rows.status == 200)
        // What a token let through is for its client alone: a shared cache in front keeps none.
        #expect(rows.header("Cache-Control")?.hasPrefix("private, max-age=") == true, "\(rows.header("Cache-Control") ?? "")")
        #expect(served.get("/sources/jokes/rows", headers: [("Authorization", "Bearer s3cret")]).header("Cache-Control")?.hasPrefix("private, ") == true)
        #expect(served.get("/events", headers: [("Cookie", "cache_session=made-up")]).status == 401)
        #expect(served.get("/events").status == 401)
        // Another site's page cannot open one (its POST is refused before the token is read).
        #expect(served.request("POST", "/session", headers: [("Authorization", "Bearer s3cret"), ("Origin", "https://evil.example")]).status == 403)
    }

    /// DNS rebinding: a page whose name resolves to the server sends its own name as `Host`.
    /// Only the names the server serves are answered, whatever the port (RFC 9110 §7.4: 421);
    /// none at all is 400 (RFC 9112 §3.2).
    @Test func onlyTheHostNamesItServesAreAnswered() throws {
        let served = try InProcessServer { $0.hostNames = ["cache.example.org"] }
        for host in ["127.0.0.1:8765", "localhost", "LOCALHOST:1", "[::1]:8765", "cache.example.org", "cache.example.org.:80", "app.localhost"] {
            #expect(served.request("GET", "/sources", host: host).status == 200, "\(host)")
        }
        for host in ["evil.example", "127.0.0.1.evil.example", "cache.example.org.evil", "evil.example:8765", "127.0.0.2", "[::2]"] {
            let refused = served.request("GET", "/sources/jokes/rows", host: host)
            #expect(refused.status == 421 && !refused.text.contains("setup"), "\(host): \(refused.status)")
        }
        #expect(served.request("GET", "/sources", host: nil).status == 400)
        #expect(served.request("GET", "/sources", headers: [("Host", "localhost")]).status == 400, "two Host headers")
    }

    /// A page of another origin may not change anything: the browser sends a CORS-simple POST
    /// without asking and blocks only the answer. Other programs send neither header.
    @Test func aPageOfAnotherOriginCannotRefresh() throws {
        let served = try InProcessServer { $0.cors = ["http://localhost:5173/"]; $0.refreshInterval = 0 }
        let refused = [
            [("Origin", "https://evil.example"), ("Sec-Fetch-Site", "cross-site")],
            [("Origin", "https://evil.example")],
            [("Origin", "null")],
            [("Sec-Fetch-Site", "cross-site")],
            [("Sec-Fetch-Site", "same-site")],
        ]
        for headers in refused {
            #expect(served.request("POST", "/sources/jokes/refresh", headers: headers).status == 403, "\(headers)")
        }
        #expect(served.upstream.requests.count == 2, "no refresh reached the upstream")
        // Reads from another origin are served (the browser keeps the answer from the page).
        #expect(served.get("/sources/jokes/rows", headers: [("Origin", "https://evil.example")]).header("Access-Control-Allow-Origin") == nil)
        for headers in [[], [("Origin", "http://127.0.0.1:8765"), ("Sec-Fetch-Site", "same-origin")], [("Sec-Fetch-Site", "none")],
                        [("Origin", "http://localhost:5173"), ("Sec-Fetch-Site", "cross-site")]] {
            let status = served.request("POST", "/sources/jokes/refresh", headers: headers).status
            #expect([200, 202].contains(status), "\(headers): \(status)")
        }
    }

    /// Forty posts in a row make one upstream sync: they join the one in flight, and one
    /// asked for within the interval of its end answers with it.
    @Test func fortyRefreshesInARowMakeOneUpstreamRequest() throws {
        let served = try InProcessServer()
        try age(served.box.database, by: 60)
        for _ in 0..<40 {
            #expect([200, 202].contains(served.request("POST", "/sources/jokes/refresh").status))
        }
        try poll(seconds: 10) { served.server.refresher.flight("jokes") == nil }
        #expect(served.upstream.requests.filter { $0 == "/jokes/ten" }.count == 2, "\(served.upstream.requests)")
    }

    /// A source backing off after failures: an explicit refresh honours it, 503 with a
    /// `Retry-After` of its own, and the upstream hears nothing.
    @Test func aRefreshHonoursTheSourcesBackoff() throws {
        let served = try InProcessServer { $0.refreshInterval = 0 }
        served.upstream.answerEverything(status: 503)
        #expect(served.box.cli("sync", "jokes", upstream: served.upstream).status != 0)
        let before = served.upstream.requests.count
        let refused = served.request("POST", "/sources/jokes/refresh")
        #expect(refused.status == 503 && Int(refused.header("Retry-After") ?? "") ?? 0 >= 1, "\(refused.status) \(refused.text)")
        #expect(served.upstream.requests.count == before)
    }

    /// RFC 9112 §6.3: what a proxy and this server could frame differently is 400, and the
    /// connection closed, before the Host or any route is looked at.
    @Test func ambiguousFramingIsRefusedBeforeAnythingElse() throws {
        let served = try InProcessServer()
        let shapes: [[(String, String)]] = [
            [("Content-Length", "5"), ("Content-Length", "6")],
            [("Content-Length", "5, 6")],
            [("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
            [("Transfer-Encoding", "gzip, chunked")],
            [("Transfer-Encoding", "identity")],
            [("Content-Length", "-1")],
        ]
        for headers in shapes {
            let reply = served.request("POST", "/sources/jokes/refresh", headers: headers, host: "evil.example")
            #expect(reply.status == 400 && reply.header("Connection") == "close", "\(headers): \(reply.status)")
        }
        let nul = served.server.respond(to: HTTPRequest(method: "GET", path: "/sources/jokes/rows/1", target: "/sources/jokes/rows/1\u{0}x",
                                                        headers: [("Host", "127.0.0.1")]))
        #expect(nul.status == 400 && nul.header("Connection") == "close")
    }

    /// The same refusal made as soon as the headers are in (`screen`, before the body is read)
    /// is logged and counted as every answer is; a request with a sound framing passes it.
    @Test func aRefusalBeforeTheBodyIsLoggedAndCounted() throws {
        let served = try InProcessServer { $0.accessLog = .json }
        let screened = InProcessServer.request("POST", "/sources/jokes/refresh", headers: [("Content-Length", "5"), ("Transfer-Encoding", "chunked")])
        let reply = try #require(served.server.screen(screened))
        #expect(reply.status == 400 && reply.header("Connection") == "close")
        let line = try #require(served.log.all.last)
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(entry["status"] as? Int == 400 && entry["path"] as? String == "/sources/jokes/refresh", "\(line)")
        #expect(served.get("/metrics").text.contains("cache_http_requests_total{route=\"POST /sources/{name}/refresh\",method=\"POST\",status=\"400\"} 1"))
        #expect(served.server.screen(InProcessServer.request("POST", "/sources/jokes/refresh", headers: [("Content-Length", "0")])) == nil)
        // A body announced larger than any route takes: 413 before it is read, logged, counted
        // by its route; from a host the server does not serve, 421 first, as any request.
        let large = [("Content-Length", String(HTTPServer.largestBody + 1))]
        let tooLarge = try #require(served.server.screen(InProcessServer.request("PATCH", "/sources/jokes/rows/1", headers: large)))
        #expect(tooLarge.status == 413 && tooLarge.header("Connection") == "close")
        #expect(served.log.all.last?.contains("\"status\": 413") == true, "\(served.log.all.last ?? "")")
        #expect(served.get("/metrics").text.contains("cache_http_requests_total{route=\"PATCH /sources/{name}/rows/{key}\",method=\"PATCH\",status=\"413\"} 1"))
        #expect(served.server.screen(InProcessServer.request("PATCH", "/sources/jokes/rows/1", headers: large, host: "evil.example"))?.status == 421)
    }

    /// `--access-log-format json`: one JSON object a request, with the query, status, bytes
    /// and duration; text a client sent cannot forge a line.
    @Test func theAccessLogSaysWhenWhoWhatAndHowLong() throws {
        let served = try InProcessServer { $0.accessLog = .json }
        _ = served.get("/sources/jokes/rows?limit=2")
        let line = try #require(served.log.all.last)
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(entry["query"] as? String == "limit=2" && entry["status"] as? Int == 200 && entry["path"] as? String == "/sources/jokes/rows")
        #expect((entry["bytes"] as? Int ?? 0) > 100 && entry["duration_ms"] != nil && (entry["time"] as? String)?.hasSuffix("Z") == true)
    }
}
