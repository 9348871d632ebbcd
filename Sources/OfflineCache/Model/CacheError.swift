import FoundationEssentials

/// Why a call into the cache failed: its database, a source, an edit, a search or a refresh.
///
/// ```swift
/// do { try cache.addSource(name: "bank", kind: .account, url: "ftp://x/") }
/// catch { print(error) }   // refused URL scheme 'ftp' (use http, https or file)
/// ```
public enum CacheError: Error, Sendable, CustomStringConvertible {
    case noDatabase(path: String)
    case cannotCreate(path: String, reason: String)
    /// A file other than the database (`metrics --textfile`) could not be written.
    case cannotWrite(path: String, reason: String)
    /// The file's schema is newer than this binary knows: nothing was written to it.
    case newerSchema(databaseVersion: Int, knownVersion: Int)
    /// Read-only mode (a replica's reader): a command that writes, or a file that would need
    /// a migration first.
    case readOnly(path: String, reason: String)
    case database(CacheError.Database)
    case noSuchSource(String)
    /// The file is not a cache database (someone else's SQLite file, or not SQLite at all).
    case notACache(path: String, reason: String)
    case noSuchRun(Int, source: String)
    /// `list --as-of` a moment before what the change log still answers for (see `cache prune`).
    case beforeHistory(source: String, asked: String, earliest: String, cause: HorizonCause?)
    /// `cache log` of a key the source has neither cached nor logged.
    case noSuchRow(String, source: String)
    /// The source was removed, or removed and added again, while it synced.
    case sourceReplaced(String)
    case sourceExists(String)
    /// A source definition that cannot be used, such as an unsafe URL scheme.
    case invalidSource(String)
    /// The file is a Litestream replica (`mark`, its follower's `FILE-txid`, is beside it): a
    /// command that writes is refused, as in read-only mode, since the follower's next update
    /// would undo the write.
    case replica(path: String, mark: String)
    /// A local edit that cannot be queued (`cache edit`), or a decision about one that cannot be
    /// made (`cache outbox`): nothing was written.
    case refusedEdit(String)
    /// An edit made on a version of the row it no longer has (an HTTP client's `If-Match`).
    case versionMismatch(String)
    /// A refresh behind a read failed, or could not start (the source is backing off after
    /// failures, or its token variable is not set): the message says which; the upstream's
    /// typed failure is there when this process ran the sync and the upstream failed it (the
    /// other failures are this error's own cases).
    case refreshFailed(String, upstream: Upstream?)
    /// `Cache.search`: search is off for the source, or the query is not one SQLite's FTS5 reads.
    case invalidSearch(String)
    /// A failure none of the cases above names (a damaged search index; an upstream's answer
    /// to a push), in a sentence.
    case failed(String)

    public var description: String {
        switch self {
        case let .noDatabase(path): "no database at \(path) yet; add a source first with 'cache sources add'"
        case let .cannotCreate(path, reason): "cannot create the database at \(path): \(reason)"
        case let .cannotWrite(path, reason): "cannot write \(path): \(reason)"
        case let .readOnly(path, reason): "the cache at \(path) is read-only here: \(reason)"
        case let .newerSchema(databaseVersion, knownVersion):
            "the database has schema version \(databaseVersion), newer than this cache knows (\(knownVersion)); use a newer cache"
        case let .database(error): "\(error)"
        case let .noSuchSource(name): "no source named '\(name)'"
        case let .refusedEdit(reason), let .versionMismatch(reason), let .refreshFailed(reason, _), let .invalidSearch(reason), let .failed(reason): reason
        case let .notACache(path, reason): "\(path) is not a cache database (\(reason)); nothing was written to it"
        case let .sourceReplaced(name): "the source '\(name)' was removed or changed during the sync; nothing was written"
        case let .noSuchRun(id, source): "no sync run \(id) of '\(source)' (see 'cache history \(source)')"
        case let .beforeHistory(source, asked, earliest, cause):
            switch cause {
            case .added: "the history of '\(source)' starts at \(earliest), when the source was added: nothing was cached at \(asked); ask for \(earliest) or later"
            case .pruned: "the change log of '\(source)' answers from \(earliest) on, not for \(asked): older runs were pruned ('cache prune'); ask for \(earliest) or later"
            case .rekeyed: "the change log of '\(source)' answers from \(earliest) on, not for \(asked): its rows were keyed anew then ('sources set --key'), and the log knows older versions by their old keys; ask for \(earliest) or later"
            case nil: "the change log of '\(source)' answers from \(earliest) on (the source was added then, or older runs were pruned, or its rows re-keyed), not for \(asked); ask for \(earliest) or later"
            }
        case let .noSuchRow(key, source): "no row '\(key)' in '\(source)', now or in its history"
        case let .sourceExists(name): "a source named '\(name)' already exists; remove it first"
        case let .invalidSource(reason): reason
        case let .replica(path, mark):
            "\(path) is a Litestream replica (\(mark) beside it is the mark of 'litestream restore -f'), so cache writes nothing to it: Litestream's next update would undo the write. Run this command where the primary is, whose syncs reach this file through Litestream; here, reads serve what the replica holds and start no refresh. (To make this file a primary of its own, stop the follower and remove \(mark).)"
        }
    }
}

extension CacheError {
    /// Why a source's history starts where it does.
    public enum HorizonCause: String, Sendable {
        /// The source was added then: before it, it had no rows.
        case added
        /// Older runs were pruned (`cache prune`).
        case pruned
        /// Its rows were keyed anew (`sources set --key`): the log knows them by their old keys.
        case rekeyed
    }
}

extension CacheError {
    /// Any error of the engine as the one type an app catches: itself, a database's as
    /// `.database`, any other as `.failed` with its sentence.
    package init(_ error: any Error) {
        switch error {
        case let error as CacheError: self = error
        case let error as CacheError.Database: self = .database(error)
        case let failure as SyncReport.Failure:
            if case .source(let error) = failure { self = error } else if case .database(let error) = failure { self = .database(error) } else { self = .failed("\(failure)") }
        default: self = .failed("\(error)")
        }
    }
}

/// The engine's name for it; an app sees `CacheError.HorizonCause`.
package typealias HorizonCause = CacheError.HorizonCause
