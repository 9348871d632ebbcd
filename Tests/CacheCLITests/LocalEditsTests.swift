import Foundation
import Glibc
import OfflineCache
import Testing

/// Local edits (`cache edit`, `cache push`, `cache outbox`) against the loopback upstream's
/// writable collection (`/api/tasks`, held to the RFCs and the Idempotency-Key draft by
/// `WritableUpstreamTests`), over real HTTP on loopback, each with the answer that decides it.
@Suite(.gated) struct LocalEditsTests {
    /// A sandbox with the source `tasks` over the upstream's tasks, writable, synced.
    static func setUp(_ tasks: [[String: Any]], in box: Sandbox = try! Sandbox(), upstream given: LoopbackUpstream? = nil,
                      extra: [String] = []) throws -> (LoopbackUpstream, Sandbox) {
        let upstream = try given ?? LoopbackUpstream()
        if given == nil { try upstream.tasks(["tasks": tasks]) }
        let added = box.cacheInProcess(["sources", "add", "tasks", "--kind", "json", "--key", "id", "--url", upstream.baseURL + "/api/tasks",
                                        "--write-url", upstream.baseURL + "/api/tasks/{key}", "--create-url", upstream.baseURL + "/api/tasks"] + extra)
        #expect(added.status == 0, "\(added.stderr)")
        let synced = box.cacheInProcess(["sync", "tasks"])
        #expect(synced.status == 0, "\(synced.stderr)")
        return (upstream, box)
    }

    static func task(_ id: Int, _ title: String? = nil, done: Bool = false) -> [String: Any] {
        ["id": id, "title": title ?? "task \(id)", "done": done]
    }

    /// The rows `list --json` shows, by key.
    static func shown(_ box: Sandbox) throws -> [String: [String: Any]] {
        let list = box.cacheInProcess(["list", "tasks", "--offline", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        return Dictionary(uniqueKeysWithValues: try list.jsonArray().map { ($0["key"] as? String ?? "", $0) })
    }

    static func outbox(_ box: Sandbox, all: Bool = false) throws -> [[String: Any]] {
        try box.cacheInProcess(["outbox", "--json"] + (all ? ["--all"] : [])).jsonArray()
    }

    static func writes(_ upstream: LoopbackUpstream) throws -> [[String: Any]] {
        try upstream.taskLog()["writes"] as? [[String: Any]] ?? []
    }

    static func applied(_ upstream: LoopbackUpstream) throws -> [[String: Any]] {
        try upstream.taskLog()["applied"] as? [[String: Any]] ?? []
    }

    static func upstreamTask(_ upstream: LoopbackUpstream, _ id: Int) throws -> [String: Any]? {
        (try upstream.taskLog()["tasks"] as? [[String: Any]])?.first { $0["id"] as? Int == id }
    }

    /// An edit is shown at once, marked pending, and queued without the network; the push
    /// applies it and the row is no longer pending; the next sync brings the upstream's own.
    @Test func anEditShowsAtOnceAndAppliesWhenPushed() throws {
        let (upstream, box) = try Self.setUp([Self.task(1), Self.task(2)])
        let edit = box.cacheInProcess(["edit", "tasks", "1", "--set", "done=true", "--set", "note=call back"])
        #expect(edit.status == 0 && edit.stdout.hasPrefix("queued: patch tasks 1"), "\(edit.stdout) \(edit.stderr)")
        #expect(try Self.writes(upstream).isEmpty, "an edit never touches the network")
        var shown = try Self.shown(box)
        #expect(shown["1"]?["pending"] as? Bool == true && shown["2"]?["pending"] as? Bool == false)
        #expect((shown["1"]?["record"] as? [String: Any])?["note"] as? String == "call back")
        #expect((shown["1"]?["record"] as? [String: Any])?["done"] as? Bool == true, "a value that parses as JSON is JSON")
        #expect(try rows(box.database, "SELECT pending FROM cached_tasks WHERE key = '1'").first?["pending"] == "1")
        #expect(try Self.outbox(box).map { $0["state"] as? String } == ["queued"])
        // The library's typed rows say the same.
        struct Task: Decodable { var id: Int; var done: Bool }
        let typed = try Cache(path: box.database).rows(of: "tasks", as: Task.self).rows
        #expect(typed.map(\.isPending) == [true, false] && typed.first?.value.done == true)

        let push = box.cacheInProcess(["push"])
        #expect(push.status == 0 && push.stdout.contains("applied"), "\(push.stdout) \(push.stderr)")
        #expect(try Self.upstreamTask(upstream, 1)?["note"] as? String == "call back")
        shown = try Self.shown(box)
        #expect(shown["1"]?["pending"] as? Bool == false && (shown["1"]?["record"] as? [String: Any])?["note"] as? String == "call back")
        #expect(try Self.outbox(box).isEmpty)
        #expect(box.cacheInProcess(["sync", "tasks"]).status == 0)
        #expect((try Self.shown(box)["1"]?["record"] as? [String: Any])?["note"] as? String == "call back")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM record_overlay").first?["n"] == "0", "the sync ended the overlay")
    }

    /// The case the Idempotency-Key is for: the upstream applies the write and the connection
    /// drops before the answer. The retry is the same request, the same key
    /// (draft-ietf-httpapi-idempotency-key-header-06 §2.6), and the record changes once.
    @Test func aWriteAppliedThenCutOffIsSentAgainWithItsKeyAndAppliedOnce() throws {
        let (upstream, box) = try Self.setUp([Self.task(1)])
        // A first edit, applied: its answer's ETag ("v2") is the next edit's precondition, so the
        // next push's first request is that edit's write, on a connection of its own. (libcurl
        // sends a request again by itself when a connection it reused dies before any answer:
        // the same request, key and all, which this test sees too, but not as its case.)
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "title=first"]).status == 0)
        #expect(box.cacheInProcess(["push"]).status == 0)
        let before = try Self.writes(upstream).count
        let edit = box.cacheInProcess(["edit", "tasks", "1", "--set", "done=true"])
        let id = try #require(edit.stdout.firstMatch(of: /edit ([0-9a-f-]{36})/)?.1).description
        try upstream.tasks(["apply_then_drop": 1])
        let first = box.cacheInProcess(["push"])
        #expect(first.status == 75, "a lost answer leaves the edit queued: \(first.stdout) \(first.stderr) \((try? Self.writes(upstream)) ?? [])")
        #expect(try Self.outbox(box).first?["state"] as? String == "queued")
        let second = box.cacheInProcess(["push"])
        #expect(second.status == 0, "\(second.stdout) \(second.stderr)")
        let writes = try Self.writes(upstream).dropFirst(before)
        #expect(writes.count == 2 && Set(writes.map { $0["idempotency_key"] as? String }) == ["\"\(id)\""], "\(writes)")
        #expect(writes.map { $0["if_match"] as? String } == ["\"v2\"", "\"v2\""], "the same precondition too")
        #expect(writes.last?["replayed"] as? Bool == true)
        #expect(try Self.applied(upstream).count == 2, "each edit applied once")
        #expect(try Self.outbox(box, all: true).map { $0["state"] as? String } == ["applied", "applied"])

        // `outbox retry` of an edit whose answer was lost sends that same request, its key and
        // all (a new key could apply it twice).
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "title=again"]).status == 0)
        try upstream.tasks(["apply_then_drop": 1])
        #expect(box.cacheInProcess(["push"]).status == 75)
        let queued = try #require(try Self.outbox(box).first)
        #expect(box.cacheInProcess(["outbox", "retry", queued["id"] as! String]).status == 0)
        #expect(box.cacheInProcess(["push"]).status == 0)
        let keys = try Self.writes(upstream).suffix(2).map { $0["idempotency_key"] as? String }
        #expect(keys.count == 2 && keys[0] == keys[1] && keys[0] == "\"\(queued["id"] as! String)\"", "\(keys)")
        #expect(try Self.applied(upstream).count == 3, "each edit applied once")
    }

    /// A change upstream between the edit and the push is never overwritten (RFC 9110 §13.1.1):
    /// with the record's ETag known the write is 412; without, the push reads the record first and
    /// finds it differs. Either way the edit is a conflict with base, local and remote kept, and
    /// `resolve --take local` sends it again onto the upstream's version.
    @Test func aChangeUpstreamIsAConflictKeptWholeAndResolvedByTakingLocal() throws {
        let (upstream, box) = try Self.setUp([Self.task(1), Self.task(2)])
        // Read first: no ETag known for task 2's cached version.
        #expect(box.cacheInProcess(["edit", "tasks", "2", "--set", "title=mine"]).status == 0)
        _ = try WritableUpstreamTests.write(upstream, "PATCH", "/api/tasks/2", #"{"title": "theirs"}"#)
        let push = box.cacheInProcess(["push"])
        #expect(push.status == 1 && push.stdout.contains("conflict"), "\(push.stdout) \(push.stderr)")
        #expect(try Self.upstreamTask(upstream, 2)?["title"] as? String == "theirs", "their change stands")
        let conflict = try #require(try Self.outbox(box).first)
        #expect(conflict["state"] as? String == "conflict")
        let shown = try #require(try box.cacheInProcess(["outbox", "show", conflict["id"] as! String, "--json"]).json() as? [String: Any])
        #expect((shown["base"] as? [String: Any])?["title"] as? String == "task 2")
        #expect((shown["remote"] as? [String: Any])?["title"] as? String == "theirs")
        #expect((shown["body"] as? [String: Any])?["title"] as? String == "mine")
        #expect((try Self.shown(box)["2"]?["record"] as? [String: Any])?["title"] as? String == "mine", "the local edit stays shown")

        let resolved = box.cacheInProcess(["outbox", "resolve", "tasks", "2", "--take", "local"])
        #expect(resolved.status == 0, "\(resolved.stderr)")
        #expect(box.cacheInProcess(["push"]).status == 0)
        #expect(try Self.upstreamTask(upstream, 2)?["title"] as? String == "mine")
        let keys = try Self.writes(upstream).compactMap { $0["idempotency_key"] as? String }
        #expect(keys.count == 1 && keys[0] != "\"\(conflict["id"] as! String)\"", "a resolved edit is a new request, a new key: \(keys)")

        // ETag known (the answer to the last write gave "v3"): the write itself is refused, 412.
        #expect(box.cacheInProcess(["edit", "tasks", "2", "--set", "done=true"]).status == 0)
        _ = try WritableUpstreamTests.write(upstream, "PATCH", "/api/tasks/2", #"{"title": "theirs again"}"#)
        #expect(box.cacheInProcess(["push"]).status == 1)
        let last = try #require(try Self.writes(upstream).last)
        #expect(last["if_match"] as? String == "\"v3\"" && last["status"] as? Int == 412, "\(last)")
        #expect(try Self.outbox(box).first?["state"] as? String == "conflict")
        #expect(try Self.upstreamTask(upstream, 2)?["done"] as? Bool == false)
        #expect(box.cacheInProcess(["outbox", "resolve", "tasks", "2", "--take", "remote"]).status == 0)
        let row = try #require(try Self.shown(box)["2"])
        #expect(row["pending"] as? Bool == false && (row["record"] as? [String: Any])?["title"] as? String == "theirs again")
        #expect(try Self.outbox(box).isEmpty)
    }

    /// A poison edit (422) never wedges the queue: the 100 edits of other records all apply;
    /// the poisoned record's later edit is blocked, not sent, and its row shows the upstream's.
    @Test func aPoisonedRecordBlocksOnlyItsOwnLaterEdits() throws {
        let (upstream, box) = try Self.setUp((1...101).map { Self.task($0) })
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "title="]).status == 0)
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "done=true"]).status == 0)
        for id in 2...101 { #expect(box.cacheInProcess(["edit", "tasks", String(id), "--set", "done=true"]).status == 0) }
        let push = box.cacheInProcess(["push", "--json"])
        #expect(push.status == 1, "\(push.stderr)")
        let report = try #require(try push.json() as? [String: Any])
        #expect(report["applied"] as? Int == 100 && report["rejected"] as? Int == 1, "\(report)")
        #expect(try Self.writes(upstream).filter { $0["path"] as? String == "/api/tasks/1" }.count == 1, "the blocked edit is not sent")
        let left = try Self.outbox(box)
        #expect(left.map { $0["state"] as? String } == ["rejected", "blocked"])
        #expect(left.first?["answer_status"] as? Int == 422 && (left.first?["answer"] as? String ?? "").contains("title"))
        let row = try #require(try Self.shown(box)["1"])
        #expect(row["pending"] as? Bool == false && (row["record"] as? [String: Any])?["title"] as? String == "task 1", "reverted")
        // Dropping the poison and retrying the blocked edit sends it.
        #expect(box.cacheInProcess(["outbox", "drop", left[0]["id"] as! String]).status == 0)
        #expect(box.cacheInProcess(["outbox", "retry", left[1]["id"] as! String]).status == 0)
        #expect(box.cacheInProcess(["push"]).status == 0)
        #expect(try Self.upstreamTask(upstream, 1)?["done"] as? Bool == true)
    }

    /// Three edits of one record go in order, each on the one before's answer (If-Match with its
    /// ETag); a refresh between the edits and the push keeps showing them.
    @Test func editsOfOneRecordGoInOrderAndARefreshKeepsThem() throws {
        let (upstream, box) = try Self.setUp([Self.task(1), Self.task(2)])
        for title in ["a", "b", "c"] { #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "title=\(title)"]).status == 0) }
        _ = try WritableUpstreamTests.write(upstream, "PATCH", "/api/tasks/2", #"{"title": "changed"}"#)
        #expect(box.cacheInProcess(["sync", "tasks", "--no-push"]).status == 0)
        var rows = try Self.shown(box)
        #expect((rows["1"]?["record"] as? [String: Any])?["title"] as? String == "c" && rows["1"]?["pending"] as? Bool == true)
        #expect((rows["2"]?["record"] as? [String: Any])?["title"] as? String == "changed", "the refresh landed")
        #expect(try Self.writes(upstream).count == 1, "--no-push sent nothing")

        #expect(box.cacheInProcess(["push"]).status == 0)
        let sent = try Self.writes(upstream).filter { $0["path"] as? String == "/api/tasks/1" }
        #expect(sent.map { $0["if_match"] as? String } == ["\"v1\"", "\"v2\"", "\"v3\""], "\(sent)")
        #expect(try Self.upstreamTask(upstream, 1)?["title"] as? String == "c")
        rows = try Self.shown(box)
        #expect(rows["1"]?["pending"] as? Bool == false && (rows["1"]?["record"] as? [String: Any])?["title"] as? String == "c")

        // An edit made on the applied version and then dropped leaves the row as the upstream's
        // answer gave it, not as the last sync did (that sync came before the edits).
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "title=d"]).status == 0)
        let d = try #require(try Self.outbox(box).first?["id"] as? String)
        #expect(box.cacheInProcess(["outbox", "drop", d]).status == 0)
        rows = try Self.shown(box)
        #expect((rows["1"]?["record"] as? [String: Any])?["title"] as? String == "c" && rows["1"]?["pending"] as? Bool == false, "\(rows["1"] ?? [:])")
        // The next edit is made on that version, with the ETag its answer gave: no read first.
        let before = try Self.writes(upstream).count
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "done=true"]).status == 0)
        #expect(box.cacheInProcess(["push"]).status == 0)
        #expect(try Self.writes(upstream).count == before + 1 && (try Self.writes(upstream).last?["if_match"] as? String) == "\"v4\"")
    }

    /// A precondition whose read the upstream refuses (405: the record URL takes no GET) sends
    /// nothing: the source's push stops and says how to go on; the edit stays queued.
    @Test func aRefusedReadSendsNothingAndSaysWhy() throws {
        let box = try Sandbox()
        let upstream = CannedUpstream()
        upstream.answer("/tasks", json: [["id": 1, "title": "one"]])
        upstream.answer("/tasks/1", status: 405)
        #expect(box.cli("sources", "add", "tasks", "--kind", "json", "--key", "id", "--url", upstream.baseURL + "/tasks",
                        "--write-url", upstream.baseURL + "/tasks/{key}", upstream: upstream).status == 0)
        #expect(box.cli("sync", "tasks", upstream: upstream).status == 0)
        #expect(box.cli("edit", "tasks", "1", "--set", "title=x", upstream: upstream).status == 0)
        let push = box.cli("push", upstream: upstream)
        // As a sync refused with that status would: bad data (65), not the credentials' 77.
        #expect(push.status == 65 && push.stderr.contains("--conflict-check none"), "\(push.status) \(push.stderr)")
        #expect(upstream.requests.filter { $0 == "/tasks/1" }.count == 1, "the read alone")
        #expect(try Self.outbox(box).first?["state"] as? String == "queued")

        // A token the source needs and the environment lacks: configuration (78), nothing sent.
        #expect(box.cli("sources", "set", "tasks", "--token-env", "CACHE_TEST_NO_SUCH_TOKEN", "--conflict-check", "none", upstream: upstream).status == 0)
        let sent = upstream.requests.count
        let tokenless = box.cli("push", upstream: upstream)
        #expect(tokenless.status == 78 && tokenless.stderr.contains("CACHE_TEST_NO_SUCH_TOKEN"), "\(tokenless.status) \(tokenless.stderr)")
        #expect(upstream.requests.count == sent)
        #expect(try Self.outbox(box).first?["state"] as? String == "queued")
    }

    /// Two caches (two machines' files) edit one record: the second push is a conflict, not a
    /// lost update.
    @Test func twoCachesEditingOneRecordMakeAConflictNotALostUpdate() throws {
        let (upstream, first) = try Self.setUp([Self.task(1)])
        let (_, second) = try Self.setUp([], upstream: upstream)
        #expect(first.cacheInProcess(["edit", "tasks", "1", "--set", "title=from the first"]).status == 0)
        #expect(second.cacheInProcess(["edit", "tasks", "1", "--set", "done=true"]).status == 0)
        #expect(first.cacheInProcess(["push"]).status == 0)
        #expect(second.cacheInProcess(["push"]).status == 1)
        let task = try #require(try Self.upstreamTask(upstream, 1))
        #expect(task["title"] as? String == "from the first" && task["done"] as? Bool == false)
        #expect(try Self.outbox(second).first?["state"] as? String == "conflict")
    }

    /// A record made here has a local key until the upstream numbers it; the key then follows.
    @Test func aCreatedRecordTakesTheUpstreamsKey() throws {
        let (upstream, box) = try Self.setUp([Self.task(7)])
        let made = box.cacheInProcess(["edit", "tasks", "--create", #"{"title": "new", "done": false}"#])
        let local = try #require(made.stdout.firstMatch(of: /(new-[0-9a-f]{8})/)?.1).description
        #expect(try Self.shown(box)[local]?["pending"] as? Bool == true)
        #expect(box.cacheInProcess(["edit", "tasks", local, "--set", "done=true"]).status == 0, "a made record can be edited before it is sent")
        #expect(box.cacheInProcess(["push"]).status == 0)
        let rows = try Self.shown(box)
        #expect(rows[local] == nil && (rows["8"]?["record"] as? [String: Any])?["done"] as? Bool == true, "\(rows.keys)")
        #expect(try Self.upstreamTask(upstream, 8)?["done"] as? Bool == true)
        #expect(box.cacheInProcess(["edit", "tasks", "8", "--delete"]).status == 0)
        #expect(try Self.shown(box)["8"]?["pending"] as? Bool == true, "a removal is shown pending until it applies")
        #expect(box.cacheInProcess(["push"]).status == 0)
        #expect(try Self.shown(box)["8"] == nil && (try Self.upstreamTask(upstream, 8)) == nil)
    }

    /// Failures that may pass keep the edit queued, with backoff (the upstream's Retry-After
    /// honoured): `sync --if-stale` leaves it until then, `cache push` sends it now. Credentials
    /// refused stop the source's push (77); the edit stays queued.
    @Test func retryableFailuresWaitAndRefusedCredentialsStop() throws {
        let (upstream, box) = try Self.setUp([Self.task(1)])
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "done=true"]).status == 0)
        try upstream.tasks(["status": 503, "retry_after": "120"])
        #expect(box.cacheInProcess(["push"]).status == 75)
        let queued = try #require(try Self.outbox(box).first)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let nextAt = try #require((queued["next_at"] as? String).flatMap { formatter.date(from: $0) })
        #expect(nextAt.timeIntervalSinceNow > 100, "Retry-After: 120 honoured: \(queued)")
        #expect(box.cacheInProcess(["sync", "--if-stale"]).status == 0)
        #expect(try Self.writes(upstream).count == 1, "its backoff has not passed")
        try upstream.tasks(["status": 401])
        #expect(box.cacheInProcess(["push"]).status == 77)
        #expect(try Self.outbox(box).first?["state"] as? String == "queued")
        #expect(box.cacheInProcess(["push"]).status == 0)
        #expect(try Self.upstreamTask(upstream, 1)?["done"] as? Bool == true)
    }

    /// The issue's answer table: "too many attempts or too old (source options)" is rejected,
    /// reason given. An edit made longer ago than `--push-max-age` that the upstream answers
    /// with a failure that may pass is rejected at that answer; one made since, answered the
    /// same way, stays queued; an old one that cannot reach the upstream waits.
    @Test func anEditPastThePushMaxAgeIsRejectedWhenItsSendFails() throws {
        let (upstream, box) = try Self.setUp([Self.task(1), Self.task(2), Self.task(3)], extra: ["--push-max-age", "1h"])
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "done=true"]).status == 0)
        try age(box.database, by: 7200)
        #expect(box.cacheInProcess(["edit", "tasks", "2", "--set", "done=true"]).status == 0)
        try upstream.tasks(["status": 503, "times": 2])
        let push = box.cacheInProcess(["push"])
        #expect(push.status == 1, "an edit was rejected: \(push.stdout) \(push.stderr)")
        let edits = Dictionary(uniqueKeysWithValues: try Self.outbox(box, all: true).map { ($0["key"] as? String ?? "", $0) })
        #expect(edits["1"]?["state"] as? String == "rejected", "\(edits)")
        #expect(edits["2"]?["state"] as? String == "queued", "made since: \(edits)")
        let life = box.cacheInProcess(["log", "tasks", "1"]).stdout
        #expect(life.contains("'--push-max-age' (1h)"), "the reason names the option: \(life)")
        #expect(try Self.shown(box)["1"]?["pending"] as? Bool == false, "the overlay is reverted")
        #expect(box.cacheInProcess(["sources", "export"]).stdout.contains("\"push-max-age\""))
        // Offline, an edit is not tried, however old: edit 3, aged past the limit, stays queued
        // while its upstream cannot be reached (the read before its send fails first).
        #expect(box.cacheInProcess(["sources", "set", "tasks", "--write-url", "http://127.0.0.1:1/api/tasks/{key}"]).status == 0)
        #expect(box.cacheInProcess(["edit", "tasks", "3", "--set", "done=true"]).status == 0)
        try age(box.database, by: 7200)
        #expect(box.cacheInProcess(["push"]).status == 75)
        #expect(try Self.outbox(box).first { $0["key"] as? String == "3" }?["state"] as? String == "queued")
        #expect(!box.cacheInProcess(["log", "tasks", "3"]).stdout.contains("push-max-age"))
        // `none` takes the limit away.
        #expect(box.cacheInProcess(["sources", "set", "tasks", "--push-max-age", "none"]).status == 0)
        #expect(!box.cacheInProcess(["sources", "export"]).stdout.contains("push-max-age"))
    }

    /// A push claims several rows' edits at once (`PushWorker.batch`, three each here: 24 edits
    /// over 8 workers) and sends them one after another: once an answer is 401, no worker sends
    /// again; the claimed rest go back to
    /// the queue unsent, their requests kept and logged `unsent` (how many were claimed by then
    /// depends on the workers' timing). The next push sends each once.
    @Test func refusedCredentialsStopTheRestOfABatchUnsent() throws {
        let (upstream, box) = try Self.setUp((1...24).map { Self.task($0) })
        for key in 1...24 { #expect(box.cacheInProcess(["edit", "tasks", String(key), "--set", "done=true"]).status == 0) }
        try upstream.tasks(["status": 401])
        #expect(box.cacheInProcess(["push"]).status == 77)
        let writes = try Self.writes(upstream)
        // (A worker whose own answer came as the 401 did may send one more before it sees the stop.)
        #expect(writes.count < 24, "after the 401, every edit was sent: \(writes.count) writes")
        let queued = try Self.outbox(box).filter { $0["state"] as? String == "queued" }.count
        #expect(queued == 24 - (writes.count - 1), "\(queued) queued after \(writes.count) writes")
        // Of the queued edits, only the one answered 401 reads as sent: those claimed and never
        // sent are logged unsent after their `sent` (and those not claimed have neither).
        let readAsSent = try Connection(path: box.database, readOnly: true).scalarInt("""
            SELECT count(*) FROM outbox o WHERE o.state = 'queued' AND EXISTS (
                SELECT 1 FROM outbox_log l WHERE l.edit = o.id AND l.event = 'sent'
                  AND NOT EXISTS (SELECT 1 FROM outbox_log u WHERE u.edit = o.id AND u.event = 'unsent' AND u.id > l.id))
            """)
        #expect(readAsSent == 1, "queued edits that read as sent: \(readAsSent ?? -1)")
        #expect(box.cacheInProcess(["push"]).status == 0)
        let applied = try Self.applied(upstream)
        #expect(applied.count == 24 && Set(applied.map { "\($0["id"] ?? "")" }).count == 24, "\(applied.count) applied")
        #expect(try (1...24).allSatisfy { try Self.upstreamTask(upstream, $0)?["done"] as? Bool == true })
    }

    /// The outbox is in `status` (and `--max-pending` for monitors), in `metrics`, and in the
    /// row's `log`: edited, sent, applied.
    @Test func theOutboxIsInStatusMetricsAndTheLog() throws {
        let (upstream, box) = try Self.setUp([Self.task(1)])
        #expect(box.cacheInProcess(["edit", "tasks", "1", "--set", "done=true"]).status == 0)
        let status = try #require(try box.cacheInProcess(["status", "tasks", "--json"]).jsonArray().first)
        #expect(status["edits_queued"] as? Int == 1 && status["edits_conflict"] as? Int == 0 && status["oldest_edit_at"] is String, "\(status)")
        #expect(box.cacheInProcess(["status"]).stdout.contains("tasks: local edits: 1 queued"))
        #expect(box.cacheInProcess(["status", "--max-pending", "1h"]).status == 0)
        try age(box.database, by: 7200)
        let late = box.cacheInProcess(["status", "--max-pending", "1h"])
        #expect(late.status == 1 && late.stderr.contains("tasks: local edits: 1 queued"), "\(late.stderr)")
        let metrics = box.cacheInProcess(["metrics"]).stdout
        #expect(metrics.contains(#"cache_outbox_edits{source="tasks",state="queued"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"cache_outbox_oldest_edit_age_seconds{source="tasks"} 72"#))
        let push = box.cacheInProcess(["push"])
        #expect(push.status == 0, "\(push.stdout) \(push.stderr)")
        let log = box.cacheInProcess(["log", "tasks", "1"]).stdout
        let events = log.split(separator: "\n").filter { $0.contains("· edit ") }.map { $0.split(separator: "·").last!.trimmingCharacters(in: .whitespaces) }
        #expect(events.map { $0.split(separator: ":").first.map(String.init) ?? "" } == ["edited", "sent", "applied"], "\(log)")
        #expect(box.cacheInProcess(["status", "--max-pending", "1h"]).status == 0, "an applied edit no longer waits")
        #expect(try Self.applied(upstream).count == 1)
    }

    /// The library edits, lists the outbox and pushes, typed, in the file the command line reads.
    @Test func theLibraryEditsPushesAndListsTheOutbox() throws {
        let (upstream, box) = try Self.setUp([Self.task(1), Self.task(2)])
        let cache = try Cache(path: box.database)
        let edit = try cache.edit("tasks", key: "2", .patch(#"{"title": "from an app"}"#))
        #expect(edit.state == .queued && edit.key == "2")
        guard case .patch(let body) = edit.change else { Issue.record("not a patch: \(edit.change)"); return }
        #expect(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? NSDictionary == ["title": "from an app"])
        #expect(try cache.outbox().map(\.id) == [edit.id])
        struct Task: Decodable { var id: Int; var title: String }
        #expect(try cache.rows(of: "tasks", as: Task.self).rows.map { "\($0.value.title) \($0.isPending)" } == ["task 1 false", "from an app true"])
        #expect(throws: CacheError.self) { try cache.edit("tasks", key: "2", .patch("[1]")) }
        let sent = try cache.push("tasks")
        #expect(sent.map(\.id) == [edit.id] && sent.first?.state == .applied && sent.first?.answerStatus == 200)
        #expect(try Self.upstreamTask(upstream, 2)?["title"] as? String == "from an app")
        #expect(try cache.outbox().isEmpty && cache.outbox(all: true).first?.state == .applied)
    }

    /// Many edits queued in one call are one transaction: in order, each shown at once and
    /// pushed as one queued alone would be; one refused edit (named by its place and key) leaves
    /// none of them queued.
    @Test func editsQueuedTogetherAreAllOrNone() throws {
        let (upstream, box) = try Self.setUp([Self.task(1), Self.task(2), Self.task(3)])
        let cache = try Cache(path: box.database)
        let refused = #expect(throws: CacheError.self) {
            try cache.edit("tasks", [("1", .patch(#"{"done": true}"#)), ("2", .delete), ("3", .patch(#"{"id": 9}"#))])
        }
        #expect(refused?.description.contains("edit 3 of 3 (key 3): the edit changes the key") == true, "\(String(describing: refused))")
        let missing = #expect(throws: CacheError.self) { try cache.edit("tasks", [("1", .patch(#"{"done": true}"#)), ("99", .delete)]) }
        #expect(missing?.description.contains("99") == true, "\(String(describing: missing))")
        #expect(try cache.outbox().isEmpty && Self.shown(box).values.allSatisfy { $0["pending"] as? Bool == false })
        let edits = try cache.edit("tasks", [("1", .patch(#"{"done": true}"#)), ("2", .delete), ("1", .patch(#"{"title": "one, done"}"#)),
                                             (nil, .create(#"{"title": "four"}"#))])
        #expect(try cache.outbox().map(\.id) == edits.map(\.id) && edits.map(\.key).prefix(3) == ["1", "2", "1"])
        let shown = try Self.shown(box)
        #expect((shown["1"]?["record"] as? [String: Any])?["title"] as? String == "one, done" && shown["1"]?["pending"] as? Bool == true)
        #expect(shown["2"]?["pending"] as? Bool == true && shown.count == 4)
        #expect(try cache.push("tasks").allSatisfy { $0.state == .applied })
        #expect(try Self.upstreamTask(upstream, 1)?["title"] as? String == "one, done" && Self.upstreamTask(upstream, 1)?["done"] as? Bool == true)
        #expect(try Self.upstreamTask(upstream, 2) == nil && Self.upstreamTask(upstream, 4)?["title"] as? String == "four")
    }

    /// The other kinds that keep records are written as json's are: a CSV and a JSON Lines
    /// source (read from files, written through the upstream's collection) show an edit at once
    /// and push it. The JSON Lines records are the upstream's own, so the default precondition
    /// (a read first, compared) holds; the CSV's are text where the API has numbers and
    /// booleans, so that source lets the last write win (`--conflict-check none`).
    @Test(arguments: ["csv", "ndjson"])
    func csvAndJSONLinesSourcesAreWrittenAsJSONIs(_ kind: String) throws {
        let (upstream, box) = try Self.setUp([Self.task(1), Self.task(2)])
        let file = box.folder + "/tasks." + kind
        let text = kind == "csv" ? "id,title,done\n1,task 1,false\n2,task 2,false\n"
            : #"{"id": 1, "title": "task 1", "done": false}"# + "\n" + #"{"id": 2, "title": "task 2", "done": false}"# + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let added = box.cacheInProcess(["sources", "add", "file", "--kind", kind, "--key", "id", "--url", "file://" + file,
                                        "--write-url", upstream.baseURL + "/api/tasks/{key}"] + (kind == "csv" ? ["--conflict-check", "none"] : []))
        #expect(added.status == 0, "\(added.stderr)")
        #expect(box.cacheInProcess(["sync", "file"]).status == 0)
        let edited = box.cacheInProcess(["edit", "file", "2", "--set", "title=from " + kind])
        #expect(edited.status == 0 && edited.stdout.contains("queued"), "\(edited.stdout) \(edited.stderr)")
        let shown = try box.cacheInProcess(["list", "file", "--offline", "--json"]).jsonArray().first { $0["key"] as? String == "2" }
        #expect(shown?["pending"] as? Bool == true && (shown?["record"] as? [String: Any])?["title"] as? String == "from \(kind)", "\(String(describing: shown))")
        let pushed = box.cacheInProcess(["push", "file"])
        #expect(pushed.status == 0, "\(pushed.stdout) \(pushed.stderr)")
        let write = try #require(try Self.writes(upstream).last)
        #expect(write["method"] as? String == "PATCH" && write["path"] as? String == "/api/tasks/2" && (write["if_match"] is String) == (kind == "ndjson"), "\(write)")
        #expect(try Self.upstreamTask(upstream, 2)?["title"] as? String == "from \(kind)" && Self.upstreamTask(upstream, 2)?["done"] as? Bool == false)
        #expect(try Self.outbox(box).isEmpty)
    }

    /// Bad input is refused with a clear error, and nothing is queued or shown.
    @Test func badEditsAreRefusedAndChangeNothing() throws {
        let (upstream, box) = try Self.setUp([Self.task(1)])
        #expect(box.cacheInProcess(["sources", "add", "ro", "--kind", "json", "--key", "id", "--url", upstream.baseURL + "/api/tasks"]).status == 0)
        #expect(box.cacheInProcess(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"]).status == 0)
        #expect(box.cacheInProcess(["sources", "set", "tasks", "--max-bytes", "200"]).status == 0)
        let cases: [([String], Int32, String)] = [
            (["edit", "nope", "1", "--set", "done=true"], 66, "no source named 'nope'"),
            (["edit", "tasks", "99", "--set", "done=true"], 66, "99"),
            (["edit", "tasks", "1", "--json", "[1, 2]"], 64, "one JSON object"),
            (["edit", "tasks", "1", "--json", "{\"done\": tru"], 64, "not JSON"),
            (["edit", "tasks", "1", "--json", "{\"a\": 1, \"a\": 2}"], 64, "named twice"),
            (["edit", "tasks", "1", "--set", "id=5"], 64, "changes the key"),
            (["edit", "tasks", "1", "--replace", "{\"title\": \"no id\"}"], 64, "key fields"),
            (["edit", "tasks", "1", "--set", "note=" + String(repeating: "x", count: 300)], 64, "--max-bytes"),
            (["edit", "ro", "1", "--set", "done=true"], 64, "--write-url"),
            (["edit", "ro", "--create", "{\"title\": \"x\"}"], 64, "--create-url"),
            (["edit", "bank", "1", "--set", "done=true"], 64, "cannot be edited"),
            (["edit", "tasks", "1"], 64, "say what to change"),
            (["--read-only", "edit", "tasks", "1", "--set", "done=true"], 78, "read-only"),
        ]
        for (arguments, status, message) in cases {
            let result = box.cacheInProcess(arguments)
            #expect(result.status == status && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr) \(message)")
        }
        #expect(try rows(box.database, "SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM record_overlay) AS n").first?["n"] == "0")
        #expect(try Self.shown(box)["1"]?["pending"] as? Bool == false)
    }

    /// A kill at any moment of a push loses nothing and applies nothing twice: 8 `SIGKILL`s of
    /// `cache push` (the binary), against an upstream that honours the key — every other one
    /// while the upstream holds the writes in flight (they apply after the push is gone: the
    /// answer lost), the rest at a random moment after its first write; then one push to the
    /// end (50 kills under `Scripts/soak`). Every edit is applied exactly once: one applied write per Idempotency-Key, and every
    /// record as its edits left it.
    @Test func killedPushesLoseNothingAndApplyNothingTwice() async throws {
        let (upstream, box) = try Self.setUp((1...150).map { Self.task($0) })
        // 1,500 edits (queued through the library): enough that each of 50 pushes is cut
        // off with edits still to send.
        let cache = try Cache(path: box.database)
        for round in 1...10 {
            for id in 1...150 { _ = try cache.edit("tasks", key: String(id), .patch(#"{"note": "\#(round) \#(id)"}"#)) }
        }
        var generator = SystemRandomNumberGenerator()
        var midPush = 0
        let kills = TestScale.pick(suite: 8, soak: 50)
        for round in 0..<kills {
            let held = round % 2 == 0
            if held { try upstream.tasks(["hold": true]) }
            let seen = try Self.writes(upstream).count
            let push = try box.start(["push"])
            // Once the upstream has seen this push's first write (or the push ended): a kill
            // among the requests in flight, not before the process starts.
            let deadline = ContinuousClock.now + .seconds(5)
            while push.process.isRunning, try Self.writes(upstream).count == seen, ContinuousClock.now < deadline { usleep(2_000) }
            if !held { usleep(UInt32.random(in: 0...3_000, using: &generator)) }
            if push.process.isRunning { midPush += 1 }
            kill(push.process.processIdentifier, SIGKILL)
            _ = await push.finished()
            if held { try upstream.tasks(["release": true]) }
        }
        #expect(midPush * 5 >= kills * 4, "only \(midPush) of \(kills) kills landed while the push ran")
        let last = try await box.cache("push")
        #expect(last.status == 0, "\(last.stdout) \(last.stderr)")
        let outbox = try Self.outbox(box, all: true)
        #expect(outbox.count == 1500 && outbox.allSatisfy { $0["state"] as? String == "applied" }, "\(outbox.filter { $0["state"] as? String != "applied" })")
        let applied = try Self.applied(upstream)
        let keys = applied.compactMap { $0["key"] as? String }
        #expect(keys.count == 1500 && Set(keys).count == 1500, "each edit applied once: \(applied.count) applied for 1500 edits")
        for id in 1...150 { #expect(try Self.upstreamTask(upstream, id)?["note"] as? String == "10 \(id)") }
    }
}

