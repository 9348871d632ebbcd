import FoundationEssentials
import OfflineCache
import Synchronization

/// JSON pages of rows, kept for the moment they are asked for again: a dashboard, a load of page
/// views, a proxy revalidating, all ask for the same page between two syncs. A kept page is given
/// only while every input of its body is as it was when it was made — the rows' version (a sync
/// that wrote or confirmed them, a local edit), the source's own stale flag and TTL, whether a
/// refresh is in flight — and before the first of its fresh rows (or its account's header)
/// crosses its TTL; the headers (`Age`, `Cache-Control`, `Cache-Status`) are made for each
/// answer. So a kept page never says anything its rows would not say now. Pages of a follower (whose lag is in the body), of a past moment,
/// of a search, and those whose rows the clock picks (`stale=1`, a filter on `stale` or `age_s`)
/// are made each time (`CacheServer.rows` decides).
final class PageMemo: Sendable {
    /// What a page's body says besides its rows, read for each request: a kept page whose inputs
    /// differ is made again.
    struct Inputs: Equatable, Sendable {
        let rows: String
        /// The newest run of any outcome: a merge sync moves the `seen_at` of rows it saw.
        let run: Int?
        let confirmedAt: String?
        let stale: Bool
        let ttlSeconds: Int
        let refreshing: Bool

        init(_ version: RowsVersion, refreshing: Bool) {
            rows = version.tag
            run = version.lastRun
            confirmedAt = version.lastSuccessAt
            stale = version.stale
            ttlSeconds = version.ttlSeconds
            self.refreshing = refreshing
        }
    }

    struct Page: Sendable {
        let body: [UInt8]
        /// The page's rows that were stale when it was made (its validator counts them).
        let staleRows: Int
        let next: String?
        /// When its first fresh row turns stale: the page is made again from then on (nil: none
        /// of its rows is fresh, and none turns fresh again without a sync).
        let freshUntil: Date?

        /// Whether none of its rows has crossed its TTL by `now`.
        func isFresh(at now: Date) -> Bool { freshUntil.map { now < $0 } ?? true }
    }

    /// At most this many pages, and bytes of them: past either, every page is dropped (a kept
    /// page is made again at the cost of one request).
    static let largestCount = 256
    static let largestBytes = 32 << 20

    /// A kept page as the hit path gives it (`CacheServer.keptAnswer`): by the request's own
    /// target, with the file's newest commit before the page was read, and what its headers are
    /// made of. Given only while that commit is still the newest (nothing was written since:
    /// no sync, edit, lease or setting), the source is still fresh by the clock, and none of
    /// its rows has crossed its TTL; and never for a page that was refreshing.
    struct Hit: Sendable {
        let page: Page
        let commit: WALIndex.Commit
        /// The file it was read from: a commit is a commit of one file.
        let file: FileIdentity?
        let source: String
        /// The source's version as read then; its age and staleness are worked out again for
        /// each answer, as the database works them out (`rowsVersion`).
        let version: RowsVersion
        let confirmed: Date
        /// Its validator (`Freshness.etag`), which nothing the clock moves goes into while the
        /// source stays fresh.
        let etag: String

        /// The version as of `now`; nil once the source is stale (a refresh is due: the
        /// route's own path starts it).
        func version(at now: Date) -> RowsVersion? {
            let age = now.timeIntervalSince(confirmed)
            guard age <= Double(version.ttlSeconds) else { return nil }
            var current = version
            current.ageSeconds = Int(age)
            return current
        }
    }

    private let pages = Locked<(kept: [String: (inputs: Inputs, page: Page)], bytes: Int, hits: [String: Hit], hitBytes: Int, made: Int)>(
        ([:], 0, [:], 0, 0))
    private let givenCount = Atomic<Int>(0)

    /// The page kept under `key` if its inputs are these and no row of it has crossed its TTL.
    func page(_ key: String, _ inputs: Inputs, now: Date = Date()) -> Page? {
        guard let kept = pages.withLock({ $0.kept[key] }), kept.inputs == inputs, kept.page.isFresh(at: now) else { return nil }
        return kept.page
    }

    func keep(_ page: Page, under key: String, _ inputs: Inputs) {
        pages.withLock { pages in
            pages.made += 1
            // A page past an eighth of the bound is made each time: kept, it would push out the rest.
            guard page.body.count <= Self.largestBytes / 8 else { return }
            let replaced = pages.kept[key]?.page.body.count
            if Self.overflows(count: pages.kept.count, bytes: pages.bytes, replacing: replaced, with: page) {
                (pages.kept, pages.bytes, pages.hits, pages.hitBytes) = ([:], 0, [:], 0)
            }
            pages.bytes += page.body.count - (pages.kept[key]?.page.body.count ?? 0)
            pages.kept[key] = (inputs, page)
        }
    }

    /// Whether keeping `page` (in place of a page of `replacing` bytes, or as a new one) would
    /// pass either bound, for a store of `count` pages and `bytes`: past it, the store is emptied.
    private static func overflows(count: Int, bytes: Int, replacing: Int?, with page: Page) -> Bool {
        replacing == nil && count >= largestCount || bytes - (replacing ?? 0) + page.body.count > largestBytes
    }

    /// The hit kept for `target` and its source's version as of `now`, if `commit` is still
    /// the newest, the source is still fresh and no row of the page has crossed its TTL.
    func hit(_ target: String, commit: WALIndex.Commit, of file: FileIdentity?, now: Date = Date()) -> (hit: Hit, version: RowsVersion)? {
        guard let hit = pages.withLock({ $0.hits[target] }), hit.commit == commit, hit.file == file, hit.page.isFresh(at: now),
              let version = hit.version(at: now) else { return nil }
        return (hit, version)
    }

    /// A hit was given (`given` counts them).
    func counted() { givenCount.add(1, ordering: .relaxed) }

    /// Keeps `hit`. Its page is one kept by `keep(_:under:_:)`, sharing its bytes until that
    /// one is made again; the hits hold to the same bounds of their own.
    func keep(_ hit: Hit, under target: String) {
        guard hit.page.body.count <= Self.largestBytes / 8 else { return }
        pages.withLock { pages in
            let replaced = pages.hits[target]?.page.body.count
            if Self.overflows(count: pages.hits.count, bytes: pages.hitBytes, replacing: replaced, with: hit.page) {
                (pages.hits, pages.hitBytes) = ([:], 0)
            }
            pages.hitBytes += hit.page.body.count - (pages.hits[target]?.page.body.count ?? 0)
            pages.hits[target] = hit
        }
    }

    /// How many pages were made to be kept (each a read of their rows).
    var made: Int { pages.withLock { $0.made } }
    /// How many answers were given by the hit path, without reading the database.
    var given: Int { givenCount.load(ordering: .relaxed) }
}
