import FoundationEssentials
import Glibc
import OfflineCache

/// A parsed command line, ready to run.
enum Command: Equatable {
    enum Format: Equatable { case human, json, csv }

    struct Status: Equatable {
        var names: [String] = []
        var json = false
        /// `--max-age`: check that each source succeeded within this many seconds.
        var maxAge: Int?
        /// `--max-lag`: on a follower, check that its primary's heartbeat is at most this old.
        var maxLag: Int?
        /// `--max-pending`: check that no local edit has waited longer than this.
        var maxPending: Int?
    }

    struct Sync: Equatable {
        var names: [String] = []
        var ifStale = false
        var json = false
        var quiet = false
        var timeout: Double?
        /// Sources fetched at once.
        var parallel = 4
        /// Reconcile and show what would change, writing nothing.
        var plan = false
        /// Apply a sync the removal guard would hold.
        var acceptRemovals = false
        /// Incremental sources sync in full.
        var full = false
        /// Leave the sources' queued edits in the outbox (every sync pushes them first).
        var noPush = false
    }

    struct List: Equatable {
        var name: String
        var staleOnly = false
        var limit: Int?
        var format = Format.human
        var offline = false
        var wait: Bool?
        /// `--columns`: the fields of a json source to show.
        var columns: [String]?
        /// `--as-of`: the rows as they were at this moment (the stored form); never refreshes.
        var asOf: String?
    }

    struct Serve: Equatable {
        /// An IP address (`127.0.0.1`, `::1`, `0.0.0.0`) and a port (0: a free one).
        var host = "127.0.0.1"
        var port: UInt16 = 8765
        /// Every request needs `Authorization: Bearer` and this variable's value.
        var tokenEnv: String?
        /// The origins whose pages may read the responses (CORS) and change things; `*`: any, for reads.
        var cors: [String] = []
        /// Host names the server answers besides its address and localhost.
        var hostNames: [String] = []
        /// A refresh asked for within this of the last sync's end answers with it.
        var refreshInterval = 10
        var maxConnectionsPerClient: UInt32 = 512
        /// `/healthz` fails when a source has not succeeded within this (or its --alert-after).
        var maxAge: Int?
        /// On a follower, `/healthz` fails when its primary's heartbeat is older than this.
        var maxLag: Int?
        var accessLog = false
        var accessLogFormat = "text"
    }

    struct Apply: Equatable {
        var file: String
        var plan = false
        var prune = false
        /// Remove what `prune` removes without asking.
        var yes = false
        var json = false
    }

    /// `cache edit NAME [KEY] …`: one local edit.
    struct Edit: Equatable {
        var name = ""
        var key: String?
        /// `--set FIELD=VALUE`, each made into the merge patch.
        var set: [String] = []
        var patch: String?
        var replace: String?
        var delete = false
        var create: String?
        /// `--wait[=DUR]`: push it and wait this long for the upstream's answer.
        var wait: Int?
    }

    /// `cache push [NAME…]`.
    struct Push: Equatable {
        var names: [String] = []
        var plan = false
        var json = false
    }

    /// `cache outbox …`: list the edits not yet applied, or decide about one.
    enum Outbox: Equatable {
        case list(names: [String], all: Bool, json: Bool)
        case show(id: String, json: Bool)
        case retry(id: String)
        case drop(id: String)
        case resolve(name: String, key: String, takeLocal: Bool)
    }

    /// `cache outbox resolve`'s `--take`.
    struct Resolving: Equatable {
        var take: String?
        var json = false
        var all = false
    }

    struct Import: Equatable {
        var manifest = ""
        var streams: [String] = []
        var prefix = ""
        var key: String?
        var plan = false
        var json = false
    }

    struct Search: Equatable {
        var name: String
        var query: String
        var json = false
        var limit = 20
    }

    case help(String)          // the command whose help to print; "" for the top level
    case version
    case completion(shell: String)
    case manpage
    case sourcesAdd(Source)
    /// The options given; the others stay as they are.
    case sourcesSet(name: String, SourceSettings)
    case sourcesList(json: Bool)
    /// `sources export`: these sources (every source when empty) as a sources file.
    case sourcesExport(names: [String])
    case apply(Apply)
    case serve(Serve)
    case sourcesRemove(String, yes: Bool)
    case sync(Sync)
    case list(List)
    case status(Status)
    case metrics(textfile: String?)
    case history(source: String?, limit: Int?, json: Bool)
    case diff(source: String, selection: HistoryStore.Selection, json: Bool)
    case prune(keepSeconds: Int)
    /// `cache log NAME KEY`: one row's versions.
    case log(source: String, key: String, json: Bool)
    case search(Search)
    /// `cache import airbyte MANIFEST`: a sources file from a connector manifest.
    case importAirbyte(Import)
    case edit(Edit)
    case push(Push)
    case outbox(Outbox)
    /// Index these sources (every source when empty) for search again.
    case reindex(names: [String])
    case sql(query: String, format: Format)
    case check
    /// `cache backup PATH`: a consistent, checked copy of the cache at a new path.
    case backup(path: String)
    case export(source: String, format: ExportFormat)

    enum ExportFormat: Equatable { case json, csv, ndjson }
}

/// Global options that may stand anywhere before `--`.
struct Invocation: Equatable {
    /// Every `--db`, in order: none (the default path), one, or several read as one cache.
    var databasePaths: [String] = []
    var databasePath: String? { databasePaths.first }
    /// `--color`: nil is `auto`.
    var color: ColorChoice? = nil
    /// `--read-only`: read what is there, write nothing (see `Context.readOnly`).
    var readOnly = false
    var command: Command
}

/// `--color auto|always|never`. `auto` colours a terminal unless `NO_COLOR` is set or `TERM=dumb`.
enum ColorChoice: String, Equatable {
    case auto, always, never
}
