import Dispatch
import FoundationEssentials
import Glibc
import OfflineCache
import Synchronization

/// `GET /events`: one Server-Sent Events stream for every source. A sync beginning is
/// `refreshing`; a run ending is `updated`, `unchanged`, `failed` or `held`, with a cursor as
/// the event's id, so a client that reconnects with `Last-Event-ID` gets the runs it missed
/// from the run history. Syncs by any process are seen: one watcher per file reads SQLite's
/// `PRAGMA data_version`, which moves when another connection commits, and reads the tables
/// only then.
///
/// The cursor is the newest run sent of each file: its number for one file, and for several
/// (sources sharded over primaries, each numbering its own runs) the numbers in `--db` order,
/// joined by `-` (`12-40`).
package final class EventHub: Sendable {
    /// One event as the stream sends it.
    struct Event: Sendable {
        var name: String
        /// The run's file (its place in `--db` order) and number there; nil for `refreshing`.
        var run: Run?
        var data: String

        struct Run: Sendable {
            var file: Int
            var id: Int
        }

        func bytes(id: String?) -> [UInt8] {
            Array(((id.map { "id: \($0)\n" } ?? "") + "event: \(name)\ndata: \(data)\n\n").utf8)
        }
    }

    /// A client's stream: the events not yet sent to it.
    final class Subscriber: Sendable {
        let pending = Mutex<[Event]>([])
        let arrived = DispatchSemaphore(value: 0)
    }

    static let keepAliveSeconds = 15.0
    static let pollMilliseconds = 100
    /// The most runs one reconnection replays, of each file.
    static let replayLimit = 1000

    private let databasePaths: [String]
    private let subscribers = Mutex<[ObjectIdentifier: Subscriber]>([:])
    private let stopping = Mutex(false)
    /// Moves when a file at one of the paths is replaced by another (a restore, an atomic
    /// replace): its runs are numbered anew, so every stream ends and its client reconnects,
    /// resuming from the new file's history (a cursor ahead of it is a new client's).
    private let generation = Mutex(0)
    private let watching = DispatchSemaphore(value: 0)

    private let access: CacheDatabase.Access
    /// Whether other processes' leases are announced: not on a read-only copy, whose leases are
    /// another machine's (its pids mean nothing here), as its rows do not count them either.
    private let announcesLeases: Bool
    /// This process's syncs begun since the watcher's last look, and when: announced at its next.
    private let ownStarts = Mutex<[String: String]>([:])

    /// Told of the sources a run just ended for (a merge sync that changed nothing still moves
    /// its rows' seen_at), after their events are out: the server takes their row census then,
    /// so no request waits for it.
    private let landed: @Sendable (CacheDatabase, [String]) -> Void

    init(databasePaths: [String], access: CacheDatabase.Access, announcesLeases: Bool,
         landed: @escaping @Sendable (CacheDatabase, [String]) -> Void = { _, _ in }) {
        self.databasePaths = databasePaths
        self.access = access
        self.announcesLeases = announcesLeases
        self.landed = landed
    }

    /// Starts a watcher per file, each reading from the newest run its file has now.
    package func start() throws {
        for (file, path) in databasePaths.enumerated() {
            let database = try CacheDatabase(path: path, access: access)
            let latest = try HistoryStore(database).runs(limit: 1).first?.id ?? 0
            let latestEdit = OutboxStore(database).lastEvent()
            // Watched from now, not from when its thread first runs (late, on a loaded machine):
            // a change made in between is then its first look's.
            nonisolated(unsafe) let watch = CommitWatch(path: path, access: access, opened: database)
            nonisolated(unsafe) var opened: CacheDatabase? = database
            DispatchQueue(label: "cache.serve.events.\(file)").async { [self] in
                // Every source's rows as the server starts: told as if their syncs had just landed.
                // (Then let go: a snapshot's connection would hold a follower's writer off.)
                if let database = opened { landed(database, (try? SourceStore(database).all().map(\.name)) ?? []) }
                opened = nil
                self.watch(watch, file: file, after: latest, edits: latestEdit)
            }
        }
    }

    /// Ends every stream and the watchers.
    package func stop() {
        stopping.withLock { $0 = true }
        for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.arrived.signal() }
        for _ in databasePaths { _ = watching.wait(timeout: .now() + .seconds(2)) }
    }

    var isStopping: Bool { stopping.withLock { $0 } }

    /// Ends a client's subscription when its stream is let go (the client went away).
    private final class Subscription {
        let hub: EventHub
        let key: ObjectIdentifier
        init(_ hub: EventHub, _ key: ObjectIdentifier) { self.hub = hub; self.key = key }
        deinit { _ = hub.subscribers.withLock { $0.removeValue(forKey: key) } }
    }

    /// A cursor as an event's id.
    func cursor(_ newest: [Int]) -> String { newest.map(String.init).joined(separator: "-") }

    /// `Last-Event-ID` as a cursor of these files, or nil when it is not one (a new client).
    func cursor(_ text: String) -> [Int]? {
        let parts = text.trimmingSpaces().split(separator: "-", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { Int($0) }.filter { $0 >= 0 }
        return parts.count == databasePaths.count && numbers.count == parts.count ? numbers : nil
    }

    /// A stream for one client, first with the runs after `lastEventID` (when it reconnects).
    func stream(lastEventID: String?, peerIsGone: @escaping () -> Bool) -> () -> [UInt8]? {
        // Which files' numbering this stream reads, taken before any file is: a file replaced
        // while it starts ends it (one reconnect too many at worst), never leaves it on the old one.
        let born = generation.withLock { $0 }
        let subscriber = Subscriber()
        let key = ObjectIdentifier(subscriber)
        subscribers.withLock { $0[key] = subscriber }
        let subscription = Subscription(self, key)
        let newest = databasePaths.map { path in
            (try? CacheDatabase(path: path, access: access)).flatMap { try? HistoryStore($0).runs(limit: 1).first?.id ?? 0 }
        }
        // A cursor ahead of a file's newest run (a client that outlived a restore of the file)
        // names runs that will never be sent: it is a new client's, with a fresh cursor, or it
        // would wait for those numbers for good.
        let resume = lastEventID.flatMap(cursor).flatMap { cursor in
            zip(cursor, newest).contains { given, newest in newest.map { given > $0 } ?? false } ? nil : cursor
        }
        // `sentThrough`: each file's runs up to this one were sent (replayed), so the live ones
        // repeat none of them. `position`: the cursor the next event's id carries.
        var sentThrough = Array(repeating: 0, count: databasePaths.count)
        var position = sentThrough
        var missed: [[SyncRunRecord]] = []
        for (file, path) in databasePaths.enumerated() {
            // A resumed cursor stays where it was for a file that cannot be read now.
            if let resume { (sentThrough[file], position[file]) = (resume[file], resume[file]) }
            let database = try? CacheDatabase(path: path, access: access)
            if let resume, let runs = database.flatMap({ try? HistoryStore($0).runs(limit: Self.replayLimit, after: resume[file]) }) {
                missed.append(runs)
                sentThrough[file] = runs.last?.id ?? resume[file]
            } else if resume == nil, let newest = database.flatMap({ try? HistoryStore($0).runs(limit: 1).first?.id }) {
                position[file] = newest
            }
        }
        func bytes(_ events: [Event]) -> [UInt8] {
            events.flatMap { event -> [UInt8] in
                guard let run = event.run else { return event.bytes(id: nil) }
                position[run.file] = max(position[run.file], run.id)
                return event.bytes(id: cursor(position))
            }
        }
        let replay = bytes(Self.merged(missed).compactMap { Self.event($0.run, file: $0.file) })
        // A new client's cursor, an id with no event: reconnecting from it, it misses no run
        // that ends from now on, even if it never saw one.
        let start = resume == nil && position.contains { $0 > 0 } ? "id: \(cursor(position))\n" : ""
        // A comment first: the response starts at once, and a proxy passes it on.
        let first = Array(": cache events\nretry: 2000\n\(start)\n".utf8) + replay
        var started = false
        return { [self] in
            withExtendedLifetime(subscription) {}
            if !started {
                started = true
                return first
            }
            while true {
                if isStopping || generation.withLock({ $0 }) != born { return nil }
                let events = subscriber.pending.withLock { pending -> [Event] in
                    defer { pending.removeAll() }
                    return pending
                }
                let fresh = events.filter { event in event.run.map { $0.id > sentThrough[$0.file] } ?? true }
                if !fresh.isEmpty {
                    for run in fresh.compactMap(\.run) { sentThrough[run.file] = max(sentThrough[run.file], run.id) }
                    return bytes(fresh)
                }
                // A second at a time, so a client that hung up is let go within one.
                var waited = 0.0
                while subscriber.arrived.wait(timeout: .now() + .seconds(1)) == .timedOut {
                    if peerIsGone() || isStopping || generation.withLock({ $0 }) != born { return nil }
                    waited += 1
                    if waited >= Self.keepAliveSeconds { return Array(": keep-alive\n\n".utf8) }
                }
            }
        }
    }

    /// Each file's runs (in its own order) as one sequence, the one that ended first next: a
    /// file's runs never pass one another, so a cursor never runs ahead of a run not yet sent.
    static func merged(_ files: [[SyncRunRecord]]) -> [(file: Int, run: SyncRunRecord)] {
        var next = Array(repeating: 0, count: files.count)
        var merged: [(file: Int, run: SyncRunRecord)] = []
        while let file = files.indices.filter({ next[$0] < files[$0].count }).min(by: { files[$0][next[$0]].finishedAt < files[$1][next[$1]].finishedAt }) {
            merged.append((file, files[file][next[file]]))
            next[file] += 1
        }
        return merged
    }

    /// A sync of `source` has begun in this process, before it takes the lease (the watcher
    /// leaves this process's leases to this): announced at the watcher's next look, within
    /// 100 ms, after the runs it sees ending, so that none of them reads as this sync's end.
    /// (The server writes one file: its first.)
    func refreshing(_ source: String) {
        ownStarts.withLock { $0[source] = Timestamp.now() }
    }

    static func refreshingEvent(_ source: String) -> Event {
        Event(name: "refreshing", run: nil, data: JSONValue.object([("source", .string(source))]).compact)
    }

    private func publish(_ events: [Event]) {
        guard !events.isEmpty else { return }
        for subscriber in subscribers.withLock({ Array($0.values) }) {
            subscriber.pending.withLock { $0 += events }
            subscriber.arrived.signal()
        }
    }

    /// Looks for new runs in one file whenever it changes (`CommitWatch`: a kept connection's
    /// `data_version`, or a snapshot's marks, and the file's identity).
    private func watch(_ watch: CommitWatch, file: Int, after latest: Int, edits latestEdit: Int) {
        defer { watching.signal() }
        var watch = watch
        var lastRun = latest
        var lastEdit = latestEdit
        // Each source's lease as last seen: a new hold is a sync that began since, even where
        // another ended in between (a source's lease taken again within one look).
        var syncing: [String: SyncLease.Hold] = [:]
        let ownPID = getpid()
        var ownPending: [String: String] = [:]
        while !isStopping {
            usleep(UInt32(Self.pollMilliseconds * 1000))
            if file == 0 { ownPending.merge(ownStarts.withLock { starts in defer { starts = [:] }; return starts }) { $1 } }
            guard let change = watch.look(force: !ownPending.isEmpty) else { continue }
            let database = change.database
            if change.anotherFile {
                // Another file at the path: its runs are numbered on their own. Start from its
                // newest, and end every stream, whose clients reconnect and resume from it.
                lastRun = (try? HistoryStore(database).runs(limit: 1).first?.id ?? 0) ?? 0
                lastEdit = OutboxStore(database).lastEvent()
                generation.withLock { $0 += 1 }
                for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.arrived.signal() }
            }
            // The runs and the leases as of one snapshot (failing, both at the next look).
            guard let (runs, holds, edits) = try? database.connection.inReadTransaction({
                (try HistoryStore(database).runs(limit: Self.replayLimit, after: lastRun),
                 announcesLeases ? try SyncLease(database).holds() : [:],
                 (try? OutboxStore(database).events(after: lastEdit)) ?? [])
            }) else {
                watch.retry()
                continue
            }
            // The runs that ended first, then the syncs begun and not yet seen: a client that read
            // them the other way round would take a run's end for the new sync's. A sync begun
            // before a run of its source seen ending now is that run's, ended (its lease is given
            // back after the run is written), and not announced.
            var events = runs.compactMap { Self.event($0, file: file) }
            lastRun = runs.last?.id ?? lastRun
            var ended: [String: String] = [:]
            for run in runs { ended[run.source] = max(ended[run.source] ?? "", run.finishedAt) }
            func begunSinceItsLastEnd(_ source: String, at start: String) -> Bool { start >= ended[source] ?? "" }
            var begun = Set(ownPending.filter { begunSinceItsLastEnd($0.key, at: $0.value) }.keys)
            ownPending = [:]
            for (source, hold) in holds where syncing[source] != hold && hold.pid != ownPID {
                if begunSinceItsLastEnd(source, at: hold.acquiredAt) { begun.insert(source) }
            }
            syncing = holds
            events += begun.sorted().map(Self.refreshingEvent)
            // Local edits: queued, applied, conflict, rejected, blocked, dropped (not replayed on
            // reconnection: GET /outbox has their state).
            events += edits.compactMap(Self.editEvent)
            lastEdit = edits.last?.rowid ?? lastEdit
            publish(events)
            if !runs.isEmpty { landed(database, runs.map(\.source)) }
        }
    }

    /// An entry of the outbox's log as its event; nil for the steps between (sent, failed).
    static func editEvent(_ entry: (rowid: Int, source: String, key: String, edit: String, event: String, state: String)) -> Event? {
        let names = ["edited": "queued", "retried": "queued", "applied": "applied", "conflict": "conflict", "rejected": "rejected",
                     "blocked": "blocked", "dropped": "dropped", "resolved": "dropped"]
        guard let name = names[entry.event] else { return nil }
        let data = JSONValue.object([("source", .string(entry.source)), ("key", .string(entry.key)), ("id", .string(entry.edit)),
                                     ("state", .string(entry.state))])
        return Event(name: name, run: nil, data: data.compact)
    }

    /// A run as its event; nil for runs no reader waits on (a `--plan`, a skip).
    static func event(_ run: SyncRunRecord, file: Int) -> Event? {
        guard ["updated", "unchanged", "failed", "held"].contains(run.outcome) else { return nil }
        let data = JSONValue.object([
            ("source", .string(run.source)), ("run", .int(run.id)), ("outcome", .string(run.outcome)),
            ("finished_at", .string(run.finishedAt)), ("inserted", .int(run.counts.inserted)),
            ("updated", .int(run.counts.updated)), ("deleted", .int(run.counts.deleted)), ("error", .optional(run.error)),
        ])
        return Event(name: run.outcome, run: Event.Run(file: file, id: run.id), data: data.compact)
    }
}
