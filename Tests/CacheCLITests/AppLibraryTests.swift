import Foundation
import Observation
import OfflineCache
import Testing

/// The library past the first screen, through `Cache` alone (this file imports `OfflineCache`
/// without `@testable`): typed rows, search, rows as of a past moment, a row's log, the run
/// history, a sync bounded in time, a read-only open, and a model a screen observes.
@Suite(.gated) struct AppLibraryTests {
    struct Item: Decodable, Equatable {
        var id: Int
        var name: String
    }

    /// A json source `items` over a file of the sandbox; the file's path.
    func items(_ box: Sandbox, _ cache: Cache, _ json: String) throws -> String {
        let file = box.folder + "/items.json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        if try !cache.hasSource(named: "items") {
            try cache.addSource(name: "items", kind: .json, url: "file://" + file, [.key: "id"])
        }
        #expect(try cache.sync("items").failure == nil)
        return file
    }

    /// A row that does not decode is named by its key, and its reason by the field's path and
    /// what was found there (issues 55 and 56): `JSONDecoder` says "The given data was not valid
    /// JSON", with no path, of a number the field's type cannot hold.
    @Test func aRowThatDoesNotDecodeSaysWhichFieldAndWhatWasFound() throws {
        struct Scored: Decodable { var id: Int; var name: String; var score: Int; var tags: [Int]? }
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        _ = try items(box, cache, """
            [{"id": 1, "name": "ada", "score": 119.74}, {"id": 2, "name": 42, "score": 1}, {"id": 3, "score": 1},
             {"id": 4, "name": null, "score": 1}, {"id": 5, "name": "x", "score": 1, "tags": [1, 2.5]}, {"id": 6, "name": "ok", "score": 7}]
            """)
        let decoded = try cache.rows(of: "items", as: Scored.self)
        #expect(decoded.rows.map(\.key) == ["6"])
        let reasons = Dictionary(uniqueKeysWithValues: decoded.failures.map { ($0.key, $0.reason) })
        #expect(reasons["1"]?.hasPrefix("score: found 119.74, which the field's type cannot hold") == true, "\(reasons["1"] ?? "")")
        #expect(reasons["2"] == "name: expected String, found 42")
        #expect(reasons["3"] == "name: missing")
        #expect(reasons["4"] == "name: expected String, found null")
        #expect(reasons["5"]?.hasPrefix("tags[1]: found 2.5") == true, "\(reasons["5"] ?? "")")
    }

    @Test func typedRowsSearchAPastMomentARowsLogAndTheHistory() async throws {
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        let file = try items(box, cache, #"[{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}, {"id": 3, "name": 42}]"#)

        // Each record into the app's type; the one that does not decode named by its key.
        let decoded = try cache.rows(of: "items", as: Item.self)
        #expect(decoded.rows.map(\.value) == [Item(id: 1, name: "ada"), Item(id: 2, name: "grace")])
        #expect(decoded.failures.map(\.key) == ["3"] && decoded.failures.first?.reason.isEmpty == false)
        let first = try #require(decoded.rows.first)
        #expect(first.key == "1" && !first.isStale && abs(first.seenAt.timeIntervalSinceNow) < 60 && first.age < .seconds(60))

        let before = Date()
        try await pause(0.05)
        try Data(#"[{"id": 1, "name": "ada lovelace"}, {"id": 2, "name": "grace"}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try cache.sync("items").outcome == .updated)
        #expect(try cache.rows(of: "items", as: Item.self).rows.first?.value.name == "ada lovelace")
        // As they were before that sync, from the change log.
        let past = try cache.rows(of: "items", as: Item.self, asOf: before)
        #expect(past.rows.map(\.value.name) == ["ada", "grace"] && past.failures.map(\.key) == ["3"], "\(past)")
        #expect(throws: CacheError.self) { try cache.rows(of: "items", as: Item.self, asOf: Date(timeIntervalSince1970: 0)) }

        let found = try cache.search("items", for: "lovelace", as: Item.self)
        #expect(found.matches.map(\.row.value.id) == [1] && found.matches.first?.snippet.contains("[lovelace]") == true, "\(found.matches.map(\.snippet))")
        #expect { try cache.search("items", for: "\"unclosed", as: Item.self) } throws: { error in
            if case CacheError.invalidSearch(let reason) = error { reason.contains("is not one FTS5 can read") } else { false }
        }

        let log = try cache.log(of: "items", key: "1")
        #expect(log.map(\.change) == [.updated, .loaded], "\(log)")
        #expect(log.first?.before?.contains("\"ada\"") == true && log.first?.after?.contains("ada lovelace") == true)
        #expect(log.first.flatMap(\.at).map { $0 >= before } == true)
        #expect(throws: CacheError.self) { try cache.log(of: "items", key: "99") }

        let runs = try cache.history(of: "items")
        #expect(runs.map(\.outcome) == ["updated", "updated"] && runs.first?.counts.updated == 1 && runs.first?.counts.deleted == 1)
        #expect(runs.first.map { $0.finishedAt >= $0.startedAt } == true)
    }

    /// Typed settings, the sources as a file and back, and what a sync changed.
    @Test func typedSettingsASourcesFileAndADiff() async throws {
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        let file = try items(box, cache, #"[{"id": 1, "name": "ada"}]"#)
        let changed = try cache.setSource(named: "items", [.ttl: .duration(.seconds(5400)), .maxPages: 7])
        #expect(changed.ttlSeconds == 5400 && changed.layout?.maxPages == 7)
        #expect(throws: CacheError.self) { try cache.setSource(named: "items", [.maxPages: .count(-1)]) }

        let exported = try cache.exportSources()
        #expect(exported.contains("\"ttl\": \"90m\"") && exported.contains("\"max-pages\": \"7\""), "\(exported)")
        let other = try Cache(path: box.folder + "/other.sqlite3")
        #expect(try other.apply(sourcesFile: exported, plan: true).map(\.action) == ["create"])
        #expect(try other.sources().isEmpty)
        #expect(try other.apply(sourcesFile: exported).map(\.action) == ["create"])
        #expect(try other.sources().first?.ttlSeconds == 5400)
        #expect(try other.apply(sourcesFile: exported.replacingOccurrences(of: "90m", with: "2h")).first?.changes == ["ttl 90m → 2h"])
        #expect(throws: CacheError.self) { try other.apply(sourcesFile: "{\"sources\": 3}") }

        try Data(#"[{"id": 1, "name": "ada lovelace"}, {"id": 2, "name": "grace"}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try cache.sync("items").outcome == .updated)
        let diff = try cache.diff(of: "items")
        #expect(Set(diff.map { "\($0.change) \($0.key)" }) == ["updated 1", "inserted 2"], "\(diff)")
        #expect(try cache.diff(of: "items", run: 1).first?.loadedRows == 1)
        #expect(throws: CacheError.self) { try cache.diff(of: "items", run: 99) }
    }

    @Test func jokesAndTransactionsDecodeIntoTheirOwnTypes() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        try cache.addSource(name: "bank", kind: .account, url: upstream.baseURL + "/account")
        try cache.addSource(name: "jokes", kind: .jokes, url: upstream.baseURL + "/jokes/ten")
        #expect(try cache.syncAll().allSatisfy { $0.failure == nil })
        let transactions = try cache.rows(of: "bank", as: Source.Kind.AccountTransaction.self)
        #expect(transactions.failures.isEmpty && transactions.rows.count == 6, "\(transactions.failures)")
        #expect(transactions.rows.allSatisfy { !$0.value.vendor.isEmpty && $0.key == $0.value.id })
        let jokes = try cache.rows(of: "jokes", as: Source.Kind.Joke.self, limit: 3)
        #expect(jokes.failures.isEmpty && jokes.rows.count == 3 && jokes.rows.allSatisfy { !$0.value.punchline.isEmpty })
    }

    /// An upstream that hangs costs the sync its timeout, not 30 s: the report says it timed
    /// out, and the cached rows stay.
    @Test func aSyncOfAHungUpstreamEndsWithinItsTimeout() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        try cache.addSource(name: "items", kind: .json, url: upstream.baseURL + "/api/items", [.key: "id"])
        #expect(try cache.sync("items").failure == nil)
        try upstream.control(["delay": 20])
        let started = ContinuousClock.now
        let report = try cache.sync("items", timeout: .seconds(1))
        let elapsed = ContinuousClock.now - started
        // The 1 s timeout, with room for a busy suite; far under the upstream's 20 s.
        #expect(elapsed < .seconds(10), "\(elapsed)")
        guard case .upstream(let error)? = report.failure, case .timedOut = error else {
            Issue.record("not a timeout: \(String(describing: report.failure))")
            return
        }
        #expect(try cache.rows(of: "items").count == 100)
    }

    /// `readOnly: true` reads as `--read-only` does, and writes not a byte: not on open, not on
    /// a read, and every call that would write refuses.
    @Test func aCacheOpenedReadOnlyReadsAndWritesNothing() async throws {
        let box = try Sandbox()
        let primary = try Cache(path: box.database)
        _ = try items(box, primary, #"[{"id": 1, "name": "ada"}]"#)
        // A copy made before any search has no index, and a read-only cache cannot build one.
        let unsearched = box.folder + "/unsearched.sqlite3"
        #expect(try await box.run("/usr/bin/sqlite3", [box.database, ".backup '\(unsearched)'"]).status == 0)
        #expect { try Cache(path: unsearched, readOnly: true).search("items", for: "ada", as: Item.self) } throws: { error in
            guard case CacheError.readOnly = error else { return false }
            return "\(error)".contains("built on its first search")
        }
        #expect(try primary.search("items", for: "ada", as: Item.self).matches.count == 1)  // builds it
        let copy = box.folder + "/copy.sqlite3"
        let backup = try await box.run("/usr/bin/sqlite3", [box.database, ".backup '\(copy)'"])
        #expect(backup.status == 0, "\(backup.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        let cache = try Cache(path: copy, readOnly: true)
        #expect(try cache.rows(of: "items", as: Item.self).rows.map(\.value.name) == ["ada"])
        #expect(try cache.search("items", for: "ada", as: Item.self).matches.count == 1)
        #expect(try cache.history().count == 1 && cache.status().count == 1)
        for write in [{ _ = try cache.sync("items") }, { try cache.addSource(name: "x", kind: .jokes, url: "http://127.0.0.1:9/") },
                      { try cache.removeSource(named: "items") }] as [() throws -> Void] {
            #expect { try write() } throws: { error in
                guard case CacheError.readOnly = error else { return false }
                return true
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes)
        #expect(["-wal", "-shm", "-journal"].allSatisfy { !FileManager.default.fileExists(atPath: copy + $0) })
        #expect(throws: CacheError.self) { try Cache(path: box.folder + "/none.sqlite3", readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: box.folder + "/none.sqlite3"))
    }

    /// The seed's `Client` as a model: `withObservationTracking` sees `.initial`, `.loading`,
    /// `.success`; a sync by another process reaches it within a second; released, it stops.
    @MainActor @Test func aModelGoesFromInitialToSuccessAndFollowsAnotherProcesssSync() async throws {
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        let file = try items(box, cache, #"[{"id": 1, "name": "ada"}]"#)
        var model: SourceModel<Item>? = cache.model(of: "items", as: Item.self, limit: 10)
        let seen = Recorded()
        #expect(model?.status == .initial)
        track(try #require(model), seen)
        try await until("the model loads") { seen.statuses.last == .success }
        #expect(seen.statuses == [.loading, .success], "\(seen.statuses)")
        #expect(model?.rows.count == 1 && model?.isStale == false)

        // Another process syncs: the model has the new rows within a second of it.
        try Data(#"[{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await box.cache("sync", "items").status == 0)
        let synced = ContinuousClock.now
        try await until("the model sees the other process's sync") { model?.rows.count == 2 }
        // It looks every 200 ms, so within a second on an idle machine; the bound leaves room
        // for a suite keeping both cores busy (2.6 s was seen once then).
        #expect(ContinuousClock.now - synced < .seconds(4))

        // A refresh asked for: isRefreshing while it runs, success after.
        await model?.refresh()
        #expect(model?.isRefreshing == false && model?.status == .success && model?.lastError == nil)

        // Released, its watcher stops.
        #expect(SourceModelWatch.watching.withLock { $0[box.database] } == 1)
        model = nil
        try await until("the released model's watcher stops") { SourceModelWatch.watching.withLock { $0[box.database] } == 0 }
    }

    /// Issue 56: a typed model's rows are the app's own type, as `rows(of:as:)` gives them; a row
    /// that does not decode is a failure with its field and what was found, never dropped; a
    /// model let go before its first turn begins nothing; the untyped form gives each row's
    /// JSON.
    @MainActor @Test func aTypedModelShowsEveryRowDecodedOrAsAFailure() async throws {
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        _ = try items(box, cache, #"[{"id": 1, "name": "ada"}, {"id": 2, "name": 7}]"#)
        let began = SourceModelWatch.started.withLock { $0[box.database, default: 0] }
        _ = cache.model(of: "items", as: Item.self)
        let model = cache.model(of: "items", as: Item.self)
        #expect(model.isPending && model.rows.isEmpty && model.status == .initial)
        try await until("the model loads") { model.status == .success }
        #expect(SourceModelWatch.started.withLock { $0[box.database, default: 0] } == began + 1, "the model let go began nothing")
        #expect(model.rows.map(\.value) == [Item(id: 1, name: "ada")] && !model.isPending && model.account == nil)
        #expect(model.failures.map(\.key) == ["2"] && model.failures.first?.reason.hasPrefix("name: expected String, found 7") == true,
                "\(model.failures)")
        let any = cache.model(of: "items")
        try await until("the untyped model loads") { any.status == .success }
        #expect(any.rows.map(\.value) == [#"{"id":1,"name":"ada"}"#, #"{"id":2,"name":7}"#] && any.failures.isEmpty, "\(any.rows)")
    }

    /// A commit by another connection as the model's first rows land, before its watcher has
    /// started, still reaches it: the watcher's first look reads the rows again. (A sync by
    /// another process right after the model loaded was missed this way, in a suite run.)
    @MainActor @Test func aModelSeesACommitMadeAsItsFirstRowsLand() async throws {
        let box = try Sandbox()
        _ = try items(box, try Cache(path: box.database), #"[{"id": 1, "name": "ada"}]"#)
        let model = try Cache(path: box.database).model(of: "items")
        /// Each commit made: the model's watchers running then, and whether it landed.
        @MainActor final class Commits { var made: [(watchers: Int, landed: Bool)] = [] }
        let commits = Commits()
        let path = box.database
        // The status's second change is to `.success`, set on the main actor as the first rows
        // land: the commit is made then, inside that change.
        withObservationTracking { _ = model.status } onChange: { [weak model] in
            Task { @MainActor in
                guard let model else { return }
                withObservationTracking { _ = model.status } onChange: {
                    MainActor.assumeIsolated {
                        let landed = (try? Connection(path: path).execute(
                            #"INSERT INTO records (source, key, record, seen_at) VALUES ('items', '2', '{"id": 2, "name": "grace"}', '2026-01-01T00:00:00Z')"#
                        )) != nil
                        commits.made.append((SourceModelWatch.watching.withLock { $0[path] ?? 0 }, landed))
                    }
                }
            }
        }
        try await until("the model loads") { model.status == .success }
        #expect(commits.made.map(\.watchers) == [0], "one commit, made before the watcher started")
        #expect(commits.made.map(\.landed) == [true])
        try await until("the model sees the commit made as its first rows landed") { model.rows.count == 2 }
    }

    /// A model of a cache opened read-only writes nothing (its loading states open the file as
    /// `--read-only` does), and still follows a sync another process makes to the file.
    @MainActor @Test func aReadOnlyModelWritesNothingAndFollowsTheFile() async throws {
        let box = try Sandbox()
        let file = try items(box, try Cache(path: box.database), #"[{"id": 1, "name": "ada"}]"#)
        let copy = box.folder + "/copy.sqlite3"
        #expect(try await box.run("/usr/bin/sqlite3", [box.database, ".backup '\(copy)'"]).status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        // As a Litestream follower's file (its mark beside it), which refuses every writer.
        try Data("0000000000000001".utf8).write(to: URL(fileURLWithPath: copy + "-txid"))
        let model = try Cache(path: copy, readOnly: true).model(of: "items")
        try await until("the read-only model loads") { model.status == .success }
        #expect(model.rows.count == 1, "\(model.status)")
        try FileManager.default.removeItem(atPath: copy + "-txid")
        // Three of its watcher's turns (a look at the file each), counted as they end.
        let looked = SourceModelWatch.looks.withLock { $0[copy, default: 0] }
        try await until("three watcher turns") { SourceModelWatch.looks.withLock { $0[copy, default: 0] } >= looked + 3 }
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes)
        #expect(["-wal", "-shm", "-journal"].allSatisfy { !FileManager.default.fileExists(atPath: copy + $0) })
        // Another process (the file's own writer) syncs a change into it.
        try Data(#"[{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await box.run(Paths.cacheBinary, ["--db", copy, "sync", "items"]).status == 0)
        try await until("the read-only model follows the file") { model.rows.count == 2 }
        // A moment past now (or none at all) reads as now, never a crash.
        #expect(try Cache(path: copy, readOnly: true).rows(of: "items", as: Item.self, asOf: Date(timeIntervalSince1970: 1e17)).rows.count == 2)
    }

    /// `isPending` (nothing to show yet) is apart from `isStale` (how old the rows are): a
    /// source that never synced is stale from the start, but its placeholders are pending, not
    /// rows to dim; they stop being pending when the first rows land, or the refresh fails.
    @MainActor @Test func aModelIsPendingUntilItHasSomethingToShow() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        try cache.addSource(name: "jokes", kind: .jokes, url: upstream.baseURL + "/jokes/ten")
        try upstream.control(["delay": 1])
        let first = cache.model(of: "jokes")
        #expect(first.isPending, "before anything is read")
        // Every look before the rows land (the refresh takes a second): pending, whatever else.
        var looks = 0, sawRefreshing = false
        let deadline = ContinuousClock.now + .seconds(20)
        while first.rows.count < 10, ContinuousClock.now < deadline {
            #expect(first.isPending, "the placeholders stopped being pending before any row (look \(looks), \(first.status))")
            sawRefreshing = sawRefreshing || first.isRefreshing
            looks += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(first.rows.count == 10 && !first.isPending && !first.isStale, "\(first.status)")
        #expect(sawRefreshing, "the first rows came from a refresh, which was seen running")

        // Cached rows are something to show at once, stale or not.
        try upstream.control(["reset": true, "status": 503])
        try age(box.database, by: 7200)
        let second = cache.model(of: "jokes")
        try await until("the cached rows are shown") { second.rows.count == 10 }
        #expect(!second.isPending && second.isStale)

        // A first sync that fails: not pending (the failure is the answer), no rows.
        try cache.addSource(name: "down", kind: .jokes, url: upstream.baseURL + "/jokes/ten")
        let failing = cache.model(of: "down")
        try await until("the refresh fails") { if case .failure = failing.status { true } else { false } }
        #expect(!failing.isPending && failing.rows.count == 0)
        // The models read their rows once for each state, typed: the states under them read none
        // (the stream an app takes itself, `states(of:)`, reads its own).
        #expect(SourceModelWatch.untypedReads.withLock { $0[box.database, default: 0] } == 0, "a model's states read rows untyped too")
        for await _ in cache.states(of: "jokes") {}
        #expect(SourceModelWatch.untypedReads.withLock { $0[box.database, default: 0] } > 0, "the count counts nothing")
    }

    /// The model follows the file its path names, as `cache serve` does (one `CommitWatch`):
    /// a file restored or moved in its place is read at the watcher's next look.
    @MainActor @Test func aModelFollowsAFilePutInPlaceOfItsOwn() async throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1, "name": "ada"}]"#)
        let model = try Cache(path: box.database).model(of: "items")
        try await until("the model loads") { model.rows.count == 1 }
        let other = try Sandbox()
        try other.syncedFileSource("items", #"[{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}]"#)
        // A rollback journal, so the side files of the file it replaces are not read with it.
        #expect(try await box.run("/usr/bin/sqlite3", [other.database, "PRAGMA journal_mode = DELETE;"]).stdout == "delete\n")
        #expect(rename(other.database, box.database) == 0)
        try await until("the model reads the file now at its path") { model.rows.count == 2 }
    }

    /// A stale source whose refresh fails: the cached rows stay, the status says why.
    @MainActor @Test func aModelWhoseRefreshFailsKeepsItsRowsAndSaysWhy() async throws {
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        let file = try items(box, cache, #"[{"id": 1, "name": "ada"}]"#)
        try cache.setSource(named: "items", [.ttl: "1"])
        try FileManager.default.removeItem(atPath: file)
        try age(box.database, by: 2)  // past the 1 s TTL, without waiting for it
        let model = cache.model(of: "items")
        try await until("the refresh fails") { if case .failure = model.status { true } else { false } }
        #expect(model.rows.count == 1 && model.isStale && !model.isRefreshing && model.lastError != nil, "\(model.status)")
    }

    /// Records each new status, observing again after each change (Observation tells once).
    @MainActor func track(_ model: SourceModel<Item>, _ seen: Recorded) {
        // The model weakly: a pending observation does not keep a released model alive.
        withObservationTracking { _ = model.status } onChange: { [weak model] in
            Task { @MainActor in
                guard let model else { return }
                seen.statuses.append(model.status)
                track(model, seen)
            }
        }
    }

    @MainActor final class Recorded {
        var statuses: [SourceModel<Item>.Status] = []
    }

    /// Polls `condition` every 20 ms for up to 10 s.
    @MainActor func until(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(condition(), "timed out waiting until \(what)")
    }
}
