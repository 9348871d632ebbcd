import Dispatch
import FoundationEssentials
import Glibc
import OfflineCache
import Synchronization

/// `GET /events`: one Server-Sent Events stream for every source. A sync beginning is
/// `refreshing`; a run ending is `updated`, `unchanged`, `failed` or `held`, with the run's
/// number as the event's id, so a client that reconnects with `Last-Event-ID` gets the runs it
/// missed from the run history. Syncs by any process are seen: one watcher reads SQLite's
/// `PRAGMA data_version`, which moves when another connection commits, and reads the tables
/// only then.
final class EventHub: Sendable {
    /// One event as the stream sends it.
    struct Event: Sendable {
        var name: String
        var id: Int?
        var data: String

        var bytes: [UInt8] {
            Array(((id.map { "id: \($0)\n" } ?? "") + "event: \(name)\ndata: \(data)\n\n").utf8)
        }
    }

    /// A client's stream: the events not yet sent to it.
    final class Subscriber: Sendable {
        let pending = Mutex<[Event]>([])
        let arrived = DispatchSemaphore(value: 0)
        /// Runs up to this one were sent (replayed), so the live ones repeat none of them.
        let sentThrough = Mutex<Int>(0)
    }

    static let keepAliveSeconds = 15.0
    static let pollMilliseconds = 100
    /// The most runs one reconnection replays.
    static let replayLimit = 1000

    private let databasePath: String
    private let subscribers = Mutex<[ObjectIdentifier: Subscriber]>([:])
    private let stopping = Mutex(false)
    private let watching = DispatchSemaphore(value: 0)
    /// Syncs announced as `refreshing` and not yet seen to end: so a lease seen later is not
    /// announced twice.
    private let announced = Mutex<Set<String>>([])

    private let access: CacheDatabase.Access

    init(databasePath: String, access: CacheDatabase.Access) {
        self.databasePath = databasePath
        self.access = access
    }

    /// Starts the watcher, reading from the newest run there is now.
    func start() throws {
        let database = try CacheDatabase(path: databasePath, access: access)
        let latest = try HistoryStore(database).runs(limit: 1).first?.id ?? 0
        nonisolated(unsafe) let watched = database
        DispatchQueue(label: "cache.serve.events").async { [self] in watch(watched, after: latest) }
    }

    /// Ends every stream and the watcher.
    func stop() {
        stopping.withLock { $0 = true }
        for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.arrived.signal() }
        _ = watching.wait(timeout: .now() + .seconds(2))
    }

    var isStopping: Bool { stopping.withLock { $0 } }

    /// Ends a client's subscription when its stream is let go (the client went away).
    private final class Subscription {
        let hub: EventHub
        let key: ObjectIdentifier
        init(_ hub: EventHub, _ key: ObjectIdentifier) { self.hub = hub; self.key = key }
        deinit { _ = hub.subscribers.withLock { $0.removeValue(forKey: key) } }
    }

    /// A stream for one client, first with the runs after `lastEventID` (when it reconnects).
    func stream(lastEventID: Int?, peerIsGone: @escaping () -> Bool) -> () -> [UInt8]? {
        let subscriber = Subscriber()
        let key = ObjectIdentifier(subscriber)
        subscribers.withLock { $0[key] = subscriber }
        let subscription = Subscription(self, key)
        var replay: [Event] = []
        var cursor = ""
        if let database = try? CacheDatabase(path: databasePath, access: access) {
            if let lastEventID, let runs = try? HistoryStore(database).runs(limit: Self.replayLimit, after: lastEventID) {
                replay = runs.compactMap(Self.event)
                subscriber.sentThrough.withLock { $0 = runs.last?.id ?? lastEventID }
            } else if lastEventID == nil, let newest = try? HistoryStore(database).runs(limit: 1).first?.id {
                // A new client's cursor, an id with no event: reconnecting from it, it misses no run
                // that ends from now on, even if it never saw one.
                cursor = "id: \(newest)\n"
            }
        }
        // A comment first: the response starts at once, and a proxy passes it on.
        var first = Array(": cache events\nretry: 2000\n\(cursor)\n".utf8)
        for event in replay { first += event.bytes }
        var started = false
        return { [self] in
            withExtendedLifetime(subscription) {}
            if !started {
                started = true
                return first
            }
            while true {
                if isStopping { return nil }
                let events = subscriber.pending.withLock { pending -> [Event] in
                    defer { pending.removeAll() }
                    return pending
                }
                let sentThrough = subscriber.sentThrough.withLock { $0 }
                let fresh = events.filter { ($0.id ?? .max) > sentThrough }
                if !fresh.isEmpty {
                    if let newest = fresh.compactMap(\.id).max() { subscriber.sentThrough.withLock { $0 = newest } }
                    return fresh.flatMap(\.bytes)
                }
                // A second at a time, so a client that hung up is let go within one.
                var waited = 0.0
                while subscriber.arrived.wait(timeout: .now() + .seconds(1)) == .timedOut {
                    if peerIsGone() || isStopping { return nil }
                    waited += 1
                    if waited >= Self.keepAliveSeconds { return Array(": keep-alive\n\n".utf8) }
                }
            }
        }
    }

    /// A sync of `source` has begun in this process.
    func refreshing(_ source: String) {
        publish([Self.refreshingEvent(source)])
        announced.withLock { _ = $0.insert(source) }
    }

    static func refreshingEvent(_ source: String) -> Event {
        Event(name: "refreshing", id: nil, data: JSONValue.object([("source", .string(source))]).compact)
    }

    private func publish(_ events: [Event]) {
        guard !events.isEmpty else { return }
        for subscriber in subscribers.withLock({ Array($0.values) }) {
            subscriber.pending.withLock { $0 += events }
            subscriber.arrived.signal()
        }
    }

    private func watch(_ database: CacheDatabase, after latest: Int) {
        defer { watching.signal() }
        var lastRun = latest
        var syncing: Set<String> = []
        var version = (try? database.connection.scalarInt("PRAGMA data_version")) ?? 0
        while !isStopping {
            usleep(UInt32(Self.pollMilliseconds * 1000))
            guard let now = try? database.connection.scalarInt("PRAGMA data_version"), now != version else { continue }
            version = now
            var events: [Event] = []
            if let held = try? SyncLease(database).heldSources() {
                let already = announced.withLock { $0 }
                for source in held.subtracting(syncing).subtracting(already).sorted() { events.append(Self.refreshingEvent(source)) }
                syncing = held
            }
            if let runs = try? HistoryStore(database).runs(limit: Self.replayLimit, after: lastRun) {
                events += runs.compactMap(Self.event)
                lastRun = runs.last?.id ?? lastRun
                announced.withLock { $0.subtract(runs.map(\.source)) }
            }
            publish(events)
        }
    }

    /// A run as its event; nil for runs no reader waits on (a `--plan`, a skip).
    static func event(_ run: SyncRunRecord) -> Event? {
        guard ["updated", "unchanged", "failed", "held"].contains(run.outcome) else { return nil }
        let data = JSONValue.object([
            ("source", .string(run.source)), ("run", .int(run.id)), ("outcome", .string(run.outcome)),
            ("finished_at", .string(run.finishedAt)), ("inserted", .int(run.counts.inserted)),
            ("updated", .int(run.counts.updated)), ("deleted", .int(run.counts.deleted)), ("error", .optional(run.error)),
        ])
        return Event(name: run.outcome, id: run.id, data: data.compact)
    }
}
