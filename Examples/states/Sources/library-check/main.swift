// library-check: what an app does past its first screen, through the public API alone (no SQL,
// no `cache` process). The tests run it against the loopback upstream:
//   library-check app DB_PATH ITEMS_URL HUNG_URL   adds and syncs a json source, decodes its rows
//       into its own type, searches, reads as of a moment, reads a row's log, syncs a hung
//       upstream within a timeout, then follows a model until another process's sync lands
//   library-check read-only DB_PATH                 reads a copy opened read-only (on a read-only
//       mount in the tests) and is refused a write
import FoundationEssentials
import Glibc
import Observation
import OfflineCache

struct Item: Decodable {
    var id: Int
    var name: String
}

func say(_ line: String) {
    print(line)
    fflush(nil)  // every stream: the tests read each line as it comes
}

let arguments = CommandLine.arguments
switch (arguments.count, arguments.dropFirst().first) {
case (5, "app"):
    let cache = try Cache(path: arguments[2])
    try cache.addSource(name: "items", kind: .json, url: arguments[3], [.key: "id"])
    let first = try cache.sync("items")
    say("synced \(first.outcome) \(first.counts.inserted)")
    let synced = Date()
    let decoded = try cache.rows(of: "items", as: Item.self)
    say("decoded \(decoded.rows.count), first \(decoded.rows.first?.value.name ?? "-"), stale \(decoded.rows.first?.isStale ?? true), undecodable \(decoded.failures.count)")
    let found = try cache.search("items", for: "\"\(decoded.rows.first?.value.name ?? "")\"", as: Item.self, limit: 3)
    say("search \(found.matches.first?.row.key ?? "-") \(found.matches.first?.snippet ?? "-")")
    say("as of \(try cache.rows(of: "items", as: Item.self, asOf: synced).rows.count)")
    say("log \(try cache.log(of: "items", key: "1").map(\.change.rawValue).joined(separator: ","))")

    try cache.addSource(name: "hung", kind: .json, url: arguments[4], [.key: "id"])
    let started = ContinuousClock.now
    let hung = try cache.sync("hung", timeout: .seconds(1))
    let waited = ContinuousClock.now - started
    say("hung: \(hung.outcome) within \(waited < .seconds(3) ? "the timeout" : "\(waited)"): \(hung.failure.map { "\($0)" } ?? "no failure")")

    let model = cache.model(of: "items")
    var seen = 0
    while true {
        let (changed, change) = AsyncStream<Void>.makeStream()
        let (status, count) = withObservationTracking { (model.status, model.rows.count) } onChange: { change.yield(); change.finish() }
        if status == .success && seen == 0 {
            seen = count
            say("model \(status) \(count); waiting for another process's sync")
        } else if status == .success && count != seen {
            say("model followed another process's sync: \(count)")
            break
        }
        for await _ in changed { break }
    }
case (3, "read-only"):
    let cache = try Cache(path: arguments[2], readOnly: true)
    let rows = try cache.rows(of: "items", as: Item.self)
    say("read-only: \(rows.rows.count) rows, search \(try cache.search("items", for: "item", as: Item.self).matches.count)")
    do {
        try cache.removeSource(named: "items")
        say("read-only: the write went through")
    } catch {
        say("read-only: write refused: \(error)")
    }
default:
    say("usage: library-check app DB_PATH ITEMS_URL HUNG_URL | library-check read-only DB_PATH")
    exit(64)
}
