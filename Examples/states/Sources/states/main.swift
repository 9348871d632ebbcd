// states DB_PATH URL: opens or creates the cache at DB_PATH, adds an account source named `bank`
// at URL unless there is one, and prints one line per loading state of `bank`, until the first
// fresh or failed one.
import Glibc
import OfflineCache

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: states DB_PATH URL")
    exit(64)
}
let cache = try Cache(path: arguments[1])
if try !cache.hasSource(named: "bank") {
    try cache.addSource(name: "bank", kind: .account, url: arguments[2])
}
for await state in cache.states(of: "bank", limit: 50) {
    switch state {
    case .preview(let rows, let stale): print("preview \(rows.count) \(stale ? "stale" : "fresh")")
    case .refreshing: print("refreshing")
    case .fresh(let rows, _): print("fresh \(rows.count)")
    case .failed(let error, _): print("failed \(error)")
    }
}
