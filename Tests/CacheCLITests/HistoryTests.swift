import Foundation
import OfflineCache
import Testing

/// What it was: `list --as-of` rebuilt from the change log for every kind, `prune` keeping what
/// it needs and refusing older times, and `cache log` of one row. Over real HTTP from the
/// loopback upstream; the commands run in-process.
@Suite(.gated) struct HistoryTests {
    /// `list NAME --json` (or `--as-of`) without the fields that measure age, which differ with
    /// the moment of reading: the rows, their content and their confirmation time.
    func rows(_ box: Sandbox, _ name: String, _ extra: [String] = []) throws -> [String] {
        let result = box.cacheInProcess(["list", name, "--json", "--offline"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return try result.jsonArray().map { row in
            var row = row
            row["age_s"] = nil
            row["stale"] = nil
            let data = try JSONSerialization.data(withJSONObject: row, options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// A moment strictly between the run just finished and the next one.
    func moment() -> String {
        usleep(20_000)
        defer { usleep(20_000) }
        return Timestamp.now()
    }

    func sync(_ box: Sandbox, _ name: String) {
        let result = box.cacheInProcess(["sync", name])
        #expect(result.status == 0, "\(result.stderr)")
    }

    func jokes(_ box: Sandbox, _ upstream: LoopbackUpstream, _ jokes: [[String: Any]]) throws {
        let file = box.folder + "/jokes.json"
        try JSONSerialization.data(withJSONObject: jokes).write(to: URL(fileURLWithPath: file))
        try upstream.serve("/history-jokes", file: file)
    }

    static func joke(_ id: Int, _ setup: String, _ punchline: String = "Because.") -> [String: Any] {
        ["id": id, "type": "general", "setup": setup, "punchline": punchline]
    }

    /// Three readings of each kind, each sync updating, inserting and removing rows; `--as-of`
    /// between them gives what `list` gave then, and `--as-of` now gives what `list` gives now.
    @Test func asOfGivesTheRowsOfEachMomentForEveryKind() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "1h")
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/history-jokes", "--ttl", "1h", "--mode", "replace")
        try await box.cache("sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100",
                            "--key", "id", "--ttl", "1h")
        let before = moment()

        // First readings: loads into an empty cache.
        try jokes(box, upstream, [Self.joke(1, "Why?"), Self.joke(2, "Who?"), Self.joke(3, "What?")])
        try upstream.setItems([["id": 1, "name": "one"], ["id": 2, "name": "two"], ["id": 3, "name": "three", "tags": ["a"]]])
        for name in ["bank", "jokes", "items"] { sync(box, name) }
        var expected: [String: [[String]]] = [:]
        for name in ["bank", "jokes", "items"] { expected[name] = [try rows(box, name)] }
        let first = moment()

        // Second: one updated, one inserted, one removed in each.
        let account = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        var changed = try changedAccount(account)
        changed["currentBalance"] = 1234.5
        try upstream.setAccount(changed)
        try jokes(box, upstream, [Self.joke(1, "Why not?"), Self.joke(2, "Who?"), Self.joke(4, "Where?")])
        try upstream.setItems([["id": 1, "name": "uno"], ["id": 2, "name": "two"], ["id": 4, "name": "four"]])
        for name in ["bank", "jokes", "items"] { sync(box, name) }
        for name in ["bank", "jokes", "items"] { expected[name]!.append(try rows(box, name)) }
        let second = moment()

        // Third: the row inserted second is updated, and a first-load row removed.
        try upstream.setAccount(account)
        try jokes(box, upstream, [Self.joke(1, "Why not?"), Self.joke(4, "Where now?")])
        try upstream.setItems([["id": 1, "name": "uno"], ["id": 4, "name": "for"]])
        for name in ["bank", "jokes", "items"] { sync(box, name) }
        for name in ["bank", "jokes", "items"] { expected[name]!.append(try rows(box, name)) }

        for name in ["bank", "jokes", "items"] {
            let readings = try #require(expected[name])
            #expect(readings[0] != readings[1] && readings[1] != readings[2], "\(name): each sync changed something")
            #expect(try rows(box, name, ["--as-of", first]) == readings[0], "\(name) as of the first sync")
            #expect(try rows(box, name, ["--as-of", second]) == readings[1], "\(name) as of the second sync")
            #expect(try rows(box, name, ["--as-of", Timestamp.now()]) == readings[2], "\(name) as of now")
            let empty = box.cacheInProcess(["list", name, "--as-of", before, "--json"])
            let emptyRows = try empty.jsonArray()
            #expect(empty.status == 0 && emptyRows.isEmpty, "\(name) before its first sync: \(empty.stdout)")
            #expect(empty.stderr.contains("Nothing was cached for '\(name)' at \(before)"))
        }

        // The account's header as of then, in the table and in CSV.
        let table = box.cacheInProcess(["list", "bank", "--as-of", first])
        #expect(table.status == 0 && !table.stdout.contains("1,234.50"), "\(table.stdout)")
        #expect(box.cacheInProcess(["list", "bank", "--as-of", second]).stdout.contains("1,234.50"))
        let csv = box.cacheInProcess(["list", "jokes", "--as-of", first, "--csv"]).stdout.split(separator: "\n")
        #expect(csv.first == "id,type,setup,punchline,source,seen_at,age_s,stale")
        #expect(csv.dropFirst().map { $0.split(separator: ",")[2] } == ["Why?", "Who?", "What?"])
        // A duration ago reads the same way: a day ago the source had not been added (66); a
        // time to come is refused as usage.
        let dayAgo = box.cacheInProcess(["list", "jokes", "--as-of", "1d", "--json"])
        #expect(dayAgo.status == 66 && dayAgo.stderr.contains("when the source was added"), "\(dayAgo.stderr)")
        #expect(box.cacheInProcess(["list", "jokes", "--as-of", "2999-01-01T00:00:00Z"]).status == 64)
    }

    /// Stale flags are measured at the moment asked for, against the TTL.
    @Test func asOfMeasuresStalenessThen() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/history-jokes", "--ttl", "1h", "--mode", "replace")
        try jokes(box, upstream, [Self.joke(1, "Why?")])
        sync(box, "jokes")
        try age(box.database, by: 3 * 3600)
        let seenAt = try #require(try box.cacheInProcess(["list", "jokes", "--json", "--offline"]).jsonArray().first?["seen_at"] as? String)
        let synced = try #require(Timestamp.parse(seenAt))
        let soon = Timestamp.format(synced.addingTimeInterval(600)), late = Timestamp.format(synced.addingTimeInterval(7200))
        let fresh = try box.cacheInProcess(["list", "jokes", "--as-of", soon, "--json"]).jsonArray()
        // Ages are whole seconds, cut from a difference of julian days: 7199.9999 is 7199.
        #expect(fresh.first?["stale"] as? Bool == false && (599...600).contains(fresh.first?["age_s"] as? Int ?? 0))
        let stale = try box.cacheInProcess(["list", "jokes", "--as-of", late, "--stale", "--json"]).jsonArray()
        #expect(stale.first?["stale"] as? Bool == true && (7199...7200).contains(stale.first?["age_s"] as? Int ?? 0))
    }

    /// `prune --keep 1h` keeps what `--as-of` needs inside the hour: a time inside it is
    /// answered right, a time before it refused (66), naming the earliest it can answer.
    @Test func pruneKeepsWhatAsOfNeedsAndRefusesOlderTimes() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/history-jokes", "--ttl", "1h", "--mode", "replace")
        try jokes(box, upstream, [Self.joke(1, "Why?"), Self.joke(2, "Who?")])
        sync(box, "jokes")
        try jokes(box, upstream, [Self.joke(1, "Why now?"), Self.joke(3, "What?")])
        sync(box, "jokes")
        let old = try rows(box, "jokes")
        try age(box.database, by: 3 * 3600)  // both runs three hours ago
        try jokes(box, upstream, [Self.joke(3, "What now?"), Self.joke(4, "When?")])
        sync(box, "jokes")
        let twoHoursAgo = Timestamp.format(Date().addingTimeInterval(-7200))
        #expect(try rows(box, "jokes", ["--as-of", twoHoursAgo]) == (try old.map { try aged($0, by: 3 * 3600) }))

        let pruned = box.cacheInProcess(["prune", "--keep", "1h"])
        #expect(pruned.status == 0 && pruned.stderr.contains("Pruned 2 sync runs"), "\(pruned.stderr)")
        // Inside the hour kept, and back to the newest run pruned: the same answer as before.
        #expect(try rows(box, "jokes", ["--as-of", twoHoursAgo]) == (try old.map { try aged($0, by: 3 * 3600) }))
        let refused = box.cacheInProcess(["list", "jokes", "--as-of", "4h"])
        #expect(refused.status == 66, "\(refused.stderr)")
        let horizon = try #require(try HistoryStore(CacheDatabase(path: box.database, access: .read)).horizon(source: "jokes"))
        #expect(refused.stderr.contains("answers from \(horizon) on") && refused.stderr.contains("older runs were pruned"), "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        // The earliest time it names is answered.
        #expect(box.cacheInProcess(["list", "jokes", "--as-of", horizon]).status == 0)
    }

    /// The times the tool prints are times it reads: `--as-of` takes the local time `history`
    /// prints (no zone), and durations such as `1h30m`; a moment before a source was added is
    /// refused with that one reason; `log` takes a composite key as the values with commas.
    @Test func timesAndKeysAsTheToolPrintsThem() async throws {
        let box = try Sandbox()
        let file = box.folder + "/days.json"
        try Data(#"[{"code": "PAR", "day": "2026-12-01", "v": 1}, {"code": "N", "day": 7, "v": 2}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(box.cacheInProcess(["sources", "add", "days", "--kind", "json", "--key", "code,day", "--url", "file://" + file]).status == 0)
        sync(box, "days")
        // Whole seconds apart: the printed form has no fractions.
        usleep(1_100_000)
        let between = moment()
        usleep(1_100_000)
        try Data(#"[{"code": "PAR", "day": "2026-12-01", "v": 3}, {"code": "N", "day": 7, "v": 2}]"#.utf8).write(to: URL(fileURLWithPath: file))
        sync(box, "days")
        let then = try rows(box, "days", ["--as-of", between])
        #expect(then.contains { $0.contains(#""v":1"#) }, "\(then)")
        // `history` prints local times with no zone: the same moment in that form, in a zone
        // half an hour off the hour, through the binary (TZ is the process's).
        let date = try #require(Timestamp.parse(between))
        let local = date.addingTimeInterval(5.5 * 3600)  // Asia/Kolkata, UTC+5:30
        var seconds = time_t(local.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let printed = String(format: "%04d-%02d-%02d %02d:%02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                             Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        let history = try await box.cache(["history", "days"], environment: ["TZ": "Asia/Kolkata"])
        #expect(history.stdout.contains(String(printed.prefix(10))), "history prints local dates: \(history.stdout)")
        let asLocal = try await box.cache(["list", "days", "--json", "--offline", "--as-of", printed], environment: ["TZ": "Asia/Kolkata"])
        #expect(asLocal.status == 0, "\(printed): \(asLocal.stderr)")
        let rowsThen = try asLocal.jsonArray().compactMap { ($0["record"] as? [String: Any])?["v"] as? Int }.sorted()
        #expect(rowsThen == [1, 2], "\(printed): \(rowsThen)")
        #expect(box.cacheInProcess(["list", "days", "--as-of", "2026-13-01 10:00:00"]).status == 64)
        // The WHEN `history` prints for the first run, pasted back as it is: that run's rows.
        let firstRun = try #require(history.stdout.split(separator: "\n").first { $0.hasPrefix("1 ") })
        let when = firstRun.split(separator: " ", omittingEmptySubsequences: true)[1...2].joined(separator: " ")
        let pasted = try await box.cache(["list", "days", "--json", "--offline", "--as-of", when], environment: ["TZ": "Asia/Kolkata"])
        #expect(try pasted.status == 0 && pasted.jsonArray().count == 2, "\(when): \(pasted.stderr)")
        // Durations as the tool takes them everywhere: 1h30m ago is before the source was added,
        // refused with that one reason.
        let young = box.cacheInProcess(["list", "days", "--as-of", "1h30m"])
        #expect(young.status == 66 && young.stderr.contains("the history of 'days' starts at ")
                && young.stderr.contains(", when the source was added"), "\(young.stderr)")
        #expect(!young.stderr.contains("pruned"), "\(young.stderr)")
        // A composite key as people write it: the values, with commas between them.
        for (written, value) in [("PAR,2026-12-01", 3), ("N,7", 2)] {
            let logged = box.cacheInProcess(["log", "days", written, "--json"])
            #expect(logged.status == 0, "\(written): \(logged.stderr)")
            #expect(logged.stdout.contains(#""v":\#(value)"#), "\(written): \(logged.stdout)")
        }
        #expect(box.cacheInProcess(["log", "days", "N,8"]).status == 66)
        #expect(box.cacheInProcess(["log", "days", #"["PAR","2026-12-01"]"#]).status == 0)
    }

    /// `age` moves seen_at in the stored rows; the rows read before it move with it.
    func aged(_ row: String, by seconds: Int) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(row.utf8)) as? [String: Any])
        let text = try #require(object["seen_at"] as? String)
        let seen = try #require(Timestamp.parse(text))
        object["seen_at"] = Timestamp.format(seen.addingTimeInterval(-Double(seconds)))
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// One record through insert, two updates and removal: four versions, newest first, each
    /// with its run, time and changed fields; a record from the first load shows as loaded.
    @Test func logShowsOneRecordsVersions() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100", "--key", "id")
        let readings: [[[String: Any]]] = [
            [["id": 1, "name": "one"]],
            [["id": 1, "name": "one"], ["id": 9, "name": "nine", "price": 1]],
            [["id": 1, "name": "one"], ["id": 9, "name": "nine", "price": 2]],
            [["id": 1, "name": "uno"], ["id": 9, "name": "NINE", "price": 2]],
            [["id": 1, "name": "uno"]],
        ]
        for items in readings {
            try upstream.setItems(items)
            sync(box, "items")
        }
        let versions = try box.cacheInProcess(["log", "items", "9", "--json"]).jsonArray()
        #expect(versions.map { $0["change"] as? String } == ["removed", "updated", "updated", "inserted"])
        #expect(versions.map { $0["run"] as? Int } == [5, 4, 3, 2])
        let fields = versions.map { version in
            (version["fields"] as? [[String: Any]] ?? []).map { "\($0["field"]!):\($0["before"]!)→\($0["after"]!)" }
        }
        #expect(fields[1] == ["name:nine→NINE"])
        #expect(fields[2] == ["price:1→2"])
        #expect(Set(fields[3]) == ["id:<null>→9", "name:<null>→nine", "price:<null>→1"])
        #expect((versions[0]["before"] as? [String: Any])?["name"] as? String == "NINE")
        #expect(versions.allSatisfy { ($0["at"] as? String).flatMap(Timestamp.parse) != nil })

        let first = try box.cacheInProcess(["log", "items", "1", "--json"]).jsonArray()
        #expect(first.map { $0["change"] as? String } == ["updated", "loaded"])
        #expect((first[1]["after"] as? [String: Any])?["name"] as? String == "one")

        let text = box.cacheInProcess(["log", "items", "9"]).stdout
        #expect(text.hasPrefix("run 5 · "), "\(text)")
        #expect(text.contains("· removed\n") && text.contains("  name: \"nine\" → \"NINE\"\n") && text.contains("  price: 1 → 2\n"))
        let missing = box.cacheInProcess(["log", "items", "77"])
        #expect(missing.status == 66 && missing.stderr.contains("no row '77' in 'items'"), "\(missing.stderr)")
    }

    /// The account's transactions by id, and its header by the source's name.
    @Test func logOfATransactionAndTheAccountHeader() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        sync(box, "bank")
        let account = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        var changed = try changedAccount(account)
        changed["currentBalance"] = 99.5
        try upstream.setAccount(changed)
        sync(box, "bank")
        let diff = try box.cacheInProcess(["diff", "bank", "--json"]).jsonArray()
        let updated = try #require(diff.first { $0["change"] as? String == "updated" && $0["row"] as? String == "transaction" }?["id"] as? String)
        let versions = try box.cacheInProcess(["log", "bank", updated, "--json"]).jsonArray()
        #expect(versions.map { $0["change"] as? String } == ["updated", "loaded"])
        #expect(versions.map { $0["row"] as? String } == ["transaction", "transaction"])
        let header = try box.cacheInProcess(["log", "bank", "bank", "--json"]).jsonArray()
        #expect(box.cacheInProcess(["log", "bank", "bank"]).stderr.isEmpty)  // nothing pruned: no note
        #expect(header.map { $0["change"] as? String } == ["updated", "inserted"])
        #expect(header.map { $0["row"] as? String } == ["account", "account"])
        #expect((header[0]["fields"] as? [[String: Any]])?.map { $0["field"] as? String } == ["balance"])
        // After a prune, the header shows as it is now.
        try age(box.database, by: 7200)
        #expect(box.cacheInProcess(["prune", "--keep", "1h"]).status == 0)
        let pruned = box.cacheInProcess(["log", "bank", "bank"])
        #expect(pruned.status == 0 && pruned.stdout.hasPrefix("now · no change logged since ") && pruned.stdout.contains("balance: 99.5"),
                "\(pruned.stdout)\(pruned.stderr)")
    }

    /// A merge jokes source (TTL 1 h) synced two hours ago with joke 1, then now with jokes 1
    /// and 2 (joke 1 comes back unchanged and is touched, joke 2 is new); with the seen_at the
    /// first sync gave joke 1.
    func mergedTwice() async throws -> (LoopbackUpstream, Sandbox, String) {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/history-jokes", "--ttl", "1h")
        try jokes(box, upstream, [Self.joke(1, "Why?")])
        sync(box, "jokes")
        try age(box.database, by: 7200)
        let written = try #require(try box.cacheInProcess(["list", "jokes", "--json", "--offline"]).jsonArray().first?["seen_at"] as? String)
        try jokes(box, upstream, [Self.joke(1, "Why?"), Self.joke(2, "Who?")])
        sync(box, "jokes")
        return (upstream, box, written)
    }

    /// A merge sync that returns a row unchanged is not logged: as of before it, the row's
    /// seen_at is the last run by then that wrote it, never unknown.
    @Test func asOfAMergeSourceKnowsWhenEachRowWasLastWritten() async throws {
        let (_, box, written) = try await mergedTwice()
        let then = try box.cacheInProcess(["list", "jokes", "--as-of", "90m", "--json"]).jsonArray()
        #expect(then.count == 1 && then.first?["seen_at"] as? String == written, "\(then)")
        #expect(then.first?["stale"] as? Bool == false && (1799...1800).contains(then.first?["age_s"] as? Int ?? 0))
        #expect(try box.cacheInProcess(["list", "jokes", "--as-of", "1m", "--stale", "--json"]).jsonArray().map { $0["id"] as? Int } == [1])
    }

    /// A new URL leaves the rows unconfirmed (stale in `list`): `--as-of` after it says so too.
    @Test func asOfAfterANewURLSaysStaleAsListDid() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/history-jokes", "--ttl", "1h",
                            "--mode", "replace")
        try jokes(box, upstream, [Self.joke(1, "Why?")])
        sync(box, "jokes")
        #expect(box.cacheInProcess(["sources", "set", "jokes", "--url", upstream.baseURL + "/history-jokes?v=2"]).status == 0)
        let listed = try #require(try box.cacheInProcess(["list", "jokes", "--json", "--offline"]).jsonArray().first)
        #expect(listed["stale"] as? Bool == true)
        let then = moment()
        let past = try #require(try box.cacheInProcess(["list", "jokes", "--as-of", then, "--json"]).jsonArray().first)
        #expect(past["stale"] as? Bool == true, "\(past)")
        // A second new URL after that moment does not make it fresh then.
        #expect(box.cacheInProcess(["sources", "set", "jokes", "--url", upstream.baseURL + "/history-jokes?v=3"]).status == 0)
        let again = try #require(try box.cacheInProcess(["list", "jokes", "--as-of", then, "--json"]).jsonArray().first)
        #expect(again["stale"] as? Bool == true, "\(again)")
    }

    /// A moment inside a sync (after it began writing, before it committed) reads the rows as
    /// the run before left them: the seen_at a run wrote counts once it has committed.
    @Test func asOfInsideASyncReadsTheRunBefore() async throws {
        let (_, box, first) = try await mergedTwice()
        // Make the second run as if its reconcile took a minute: it wrote the row's seen_at a
        // minute before it committed.
        let db = try Connection(path: box.database)
        try db.execute("UPDATE jokes SET seen_at = strftime('%Y-%m-%dT%H:%M:%fZ', seen_at, '-60 seconds')")
        try db.execute("UPDATE sync_runs SET wrote_at = strftime('%Y-%m-%dT%H:%M:%fZ', wrote_at, '-60 seconds') WHERE id = 2")
        let inside = try #require(try db.scalarText("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', wrote_at, '+30 seconds') FROM sync_runs WHERE id = 2"))
        let row = try #require(try box.cacheInProcess(["list", "jokes", "--as-of", inside, "--json"]).jsonArray().first)
        let rowsThen = try box.cacheInProcess(["list", "jokes", "--as-of", inside, "--json"]).jsonArray()
        #expect(rowsThen.count == 1 && row["seen_at"] as? String == first && row["stale"] as? Bool == true, "\(rowsThen) \(first)")
    }

    /// Rows a prune left without any logged change still show in `log`, as they are now; after
    /// a re-key, versions under the old keys are not shown, and none is made up.
    @Test func logAfterAPruneAndAReKey() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100", "--key", "id")
        try upstream.setItems([["id": 1, "name": "a", "v": 1]])
        sync(box, "items")
        try upstream.setItems([["id": 1, "name": "a", "v": 2]])
        sync(box, "items")
        #expect(try box.cacheInProcess(["log", "items", "1", "--json"]).jsonArray().count == 2)
        #expect(box.cacheInProcess(["sources", "set", "items", "--key", "name"]).status == 0)
        let rekeyed = box.cacheInProcess(["log", "items", "a"])
        #expect(rekeyed.status == 0 && rekeyed.stdout.hasPrefix("now · no change logged since ") && rekeyed.stdout.contains("  v: 2\n"),
                "\(rekeyed.stdout)")
        #expect(!rekeyed.stdout.contains("loaded"))
        #expect(rekeyed.stderr.contains("older runs were pruned, its rows re-keyed"))
        let now = try box.cacheInProcess(["log", "items", "a", "--json"]).jsonArray()
        #expect(now.count == 1 && now.first?["change"] as? String == "current" && now.first?["run"] is NSNull, "\(now)")
        #expect((now.first?["after"] as? [String: Any])?["v"] as? Int == 2)
        #expect(box.cacheInProcess(["log", "items", "1"]).status == 66)

        try age(box.database, by: 7200)
        #expect(box.cacheInProcess(["prune", "--keep", "1h"]).status == 0)
        let pruned = box.cacheInProcess(["log", "items", "a"])
        #expect(pruned.status == 0 && pruned.stdout.contains("  v: 2\n") && pruned.stderr.contains("older runs were pruned"), "\(pruned.stderr)")
    }

    /// A source removed and added again under its name is another source: its history starts
    /// when it was added, and times before are refused rather than answered with its rows.
    @Test func aSourceAddedAgainAnswersFromWhenItWasAdded() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/history-jokes")
        try jokes(box, upstream, [Self.joke(1, "Why?")])
        sync(box, "jokes")
        let before = moment()
        #expect(box.cacheInProcess(["sources", "remove", "jokes", "--yes"]).status == 0)
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/history-jokes")
        let refused = box.cacheInProcess(["list", "jokes", "--as-of", before])
        #expect(refused.status == 66 && refused.stderr.contains("when the source was added"), "\(refused.stderr)")
    }
}
