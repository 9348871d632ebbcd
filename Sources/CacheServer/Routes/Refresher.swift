import Dispatch
import FoundationEssentials
import OfflineCache
import Synchronization

/// The server's refreshes: at most one per source in this process at a time, run on a thread
/// of their own under the source's lease (shared with every other process), so ten stale reads
/// at once send one request upstream and none of them waits for it.
package final class Refresher: Sendable {
    /// One refresh in flight: waited on by `Prefer: wait`, read once it ends.
    final class Flight: Sendable {
        let ended = DispatchSemaphore(value: 0)
        let report = Mutex<SyncReport?>(nil)

        /// The sync's report once it ended within `seconds`; nil while it still runs (or the
        /// server is stopping: `Refresher.stop` wakes every waiter).
        func wait(seconds: Double) -> SyncReport? {
            if let done = report.withLock({ $0 }) { return done }
            guard ended.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .success else { return nil }
            ended.signal()  // for the next waiter
            return report.withLock { $0 }
        }
    }

    private let databasePath: String
    private let environment: [String: String]
    private let fetcher: any Fetching
    private let flights = Locked<[String: Flight]>([:])
    /// The syncs this server has started (a read's refresh, or one asked for), counted as each
    /// starts: `/metrics` shows it, and a test proves none started without waiting for one.
    private let startedCount = Atomic(0)
    private let queue = DispatchQueue(label: "cache.serve.refresh", attributes: .concurrent)

    /// Told when this process starts a refresh, for the events' `refreshing` (their watcher
    /// leaves this process's leases to this).
    private let started: @Sendable (String) -> Void

    init(databasePath: String, environment: [String: String], fetcher: any Fetching,
         started: @escaping @Sendable (String) -> Void = { _ in }) {
        self.databasePath = databasePath
        self.environment = environment
        self.fetcher = fetcher
        self.started = started
    }

    /// Wakes every `Prefer: wait` (they answer 202), so a SIGTERM's drain is not held up by a
    /// slow upstream. The syncs themselves stop with the process: each writes in one
    /// transaction, so an unfinished one leaves nothing behind.
    package func stop() {
        for flight in flights.withLock({ Array($0.values) }) { flight.ended.signal() }
    }

    /// How many syncs this server has started.
    package var startedSyncs: Int { startedCount.load(ordering: .relaxed) }

    /// The count as `/metrics` gives it.
    var exposition: String {
        "# HELP cache_serve_refreshes_started_total Syncs this server started: refreshes behind stale reads and ones asked for.\n"
            + "# TYPE cache_serve_refreshes_started_total counter\ncache_serve_refreshes_started_total \(startedSyncs)\n"
    }

    /// The refresh of `source` this process runs, if any.
    func flight(_ source: String) -> Flight? {
        flights.withLock { $0[source] }
    }

    /// Starts a sync of `source` unless this process runs one: the flight, and whether this call
    /// started it. `onlyIfStale`: as a read's refresh, skipped under the lease when another
    /// process's sync has just made it fresh.
    func start(_ source: String, onlyIfStale: Bool) -> (flight: Flight, started: Bool) {
        let (flight, started) = flights.withLock { flights -> (Flight, Bool) in
            if let running = flights[source] { return (running, false) }
            let flight = Flight()
            flights[source] = flight
            return (flight, true)
        }
        guard started else { return (flight, false) }
        startedCount.add(1, ordering: .relaxed)
        self.started(source)
        let path = databasePath, environment = environment, fetcher = fetcher
        queue.async {
            let report: SyncReport
            do {
                let database = try CacheDatabase(path: path, access: .write)
                var options = SyncEngine.Options()
                options.onlyIfStale = onlyIfStale
                report = try SyncEngine(database: database, fetcher: fetcher, environment: environment).sync(source, options: options)
            } catch {
                report = SyncReport(failed: source, error)
            }
            flight.report.withLock { $0 = report }
            self.flights.withLock { $0[source] = nil }
            flight.ended.signal()
        }
        return (flight, true)
    }
}
