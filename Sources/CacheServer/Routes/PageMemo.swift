import FoundationEssentials
import OfflineCache

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
    }

    /// At most this many pages, and bytes of them: past either, every page is dropped (a kept
    /// page is made again at the cost of one request).
    static let largestCount = 256
    static let largestBytes = 32 << 20

    private let pages = Locked<(kept: [String: (inputs: Inputs, page: Page)], bytes: Int, made: Int)>(([:], 0, 0))

    /// The page kept under `key` if its inputs are these and no row of it has crossed its TTL.
    func page(_ key: String, _ inputs: Inputs, now: Date = Date()) -> Page? {
        guard let kept = pages.withLock({ $0.kept[key] }), kept.inputs == inputs else { return nil }
        if let freshUntil = kept.page.freshUntil, now >= freshUntil { return nil }
        return kept.page
    }

    func keep(_ page: Page, under key: String, _ inputs: Inputs) {
        pages.withLock { pages in
            pages.made += 1
            // A page past an eighth of the bound is made each time: kept, it would push out the rest.
            guard page.body.count <= Self.largestBytes / 8 else { return }
            if pages.kept.count >= Self.largestCount || pages.bytes + page.body.count > Self.largestBytes {
                (pages.kept, pages.bytes) = ([:], 0)
            }
            pages.bytes += page.body.count - (pages.kept[key]?.page.body.count ?? 0)
            pages.kept[key] = (inputs, page)
        }
    }

    /// How many pages were made to be kept (each a read of their rows).
    var made: Int { pages.withLock { $0.made } }
}
