import FoundationEssentials

/// One connection to the cache's file kept between calls and used by one call at a time: opened
/// on the first, and again when the file at the path is another one (restored, replaced). For
/// calls that come often and each do little (an app's edits).
final class KeptConnection: @unchecked Sendable {
    /// Held while a call uses `database`, which only such a call touches.
    private let lock = Condition()
    private var database: CacheDatabase?

    func with<T>(path: String, _ body: (CacheDatabase) throws(CacheError) -> T) throws(CacheError) -> T {
        lock.lock()
        defer { lock.unlock() }
        if database?.isStillAtPath != true { database = try CacheDatabase(path: path, access: .write) }
        return try body(database!)
    }
}
