import FoundationEssentials
import Glibc
import OfflineCache

// Scripts/bench's library side: `cache-bench queue-edits DB SOURCE COUNT [--together]` queues
// COUNT local edits (a merge patch of one field) of the records keyed 1…COUNT through
// `Cache.edit`, one transaction each as an app's would be (with --together, in one call, one
// transaction), and prints {"edits", "seconds"}.
func fail(_ message: String, _ status: Int32) -> Never {
    let line = message + "\n"
    _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 5 || (arguments.count == 6 && arguments[5] == "--together"), arguments[1] == "queue-edits",
      let count = Int(arguments[4]), count > 0 else {
    fail("usage: cache-bench queue-edits DB SOURCE COUNT [--together]", 64)
}
do {
    let cache = try Cache(path: arguments[2])
    let clock = ContinuousClock()
    let started = clock.now
    let edits = (1...count).map { key in (key: String?.some(String(key)), change: LocalEdit.Change.patch("{\"note\": \"edit \(key)\"}")) }
    if arguments.count == 6 {
        _ = try cache.edit(arguments[3], edits)
    } else {
        for edit in edits { _ = try cache.edit(arguments[3], key: edit.key, edit.change) }
    }
    let elapsed = clock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("{\"edits\": \(count), \"seconds\": \(seconds)}")
} catch {
    fail("cache-bench: \(error)", 1)
}
