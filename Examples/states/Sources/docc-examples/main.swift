// docc-examples: the Swift blocks of the library's DocC articles
// (Sources/OfflineCache/OfflineCache.docc), each in a function of its own so that they compile
// side by side, as they are written there (an article's `import` lines are this file's). They are
// compiled, not run: they name an app's own paths and hosts. DocumentationTests holds every block
// not marked an illustration to be here; ExampleTests builds this package.
import OfflineCache

/// OfflineCache.md, the landing page.
@MainActor func landing() throws {
let cache = try Cache(path: "/var/lib/myapp/cache.sqlite3")
if try !cache.hasSource(named: "bank") {
    try cache.addSource(name: "bank", kind: .account, url: "https://bank.example/api/account")
}
let model = cache.model(of: "bank", as: Source.Kind.AccountTransaction.self, limit: 50)   // an @Observable model, typed rows
    _ = model
}

/// GettingStarted.md, "Open the cache and add the source".
func openTheCacheAndAddTheSource() throws {
let cache = try Cache(path: "/var/lib/myapp/cache.sqlite3")
if try !cache.hasSource(named: "bank") {
    try cache.addSource(name: "bank", kind: .account, url: "https://bank.example/api/account",
                        [.ttl: "15m", .tokenEnv: "BANK_TOKEN"])
}
}

/// GettingStarted.md, "Read past the first screen".
func readPastTheFirstScreen(_ cache: Cache) throws {
let page = try cache.rows(of: "bank", as: Source.Kind.AccountTransaction.self, limit: 50)
let coffee = try cache.search("bank", for: "starbucks", as: Source.Kind.AccountTransaction.self)
if let first = page.rows.first {
    print(try cache.log(of: "bank", key: first.key))   // what each sync did to that row
}
let report = try cache.sync("bank", timeout: .seconds(10))
print(page.failures, coffee.matches.count, report.failure.map { "\($0)" } ?? "synced")
// The rows as they were a week ago, from the change log. A cache younger than that (or one
// whose history was pruned past it) cannot say: it throws, naming the oldest moment it can.
do {
    let lastWeek = try cache.rows(of: "bank", as: Source.Kind.AccountTransaction.self, asOf: .now.addingTimeInterval(-7 * 86_400))
    print(lastWeek.rows.count)
} catch {   // a CacheError: every call throws that one type
    print(error)
}
}
