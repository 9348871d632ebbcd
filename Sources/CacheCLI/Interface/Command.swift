import FoundationEssentials
import Glibc
import OfflineCache

/// A parsed command line, ready to run.
enum Command: Equatable {
    enum Format: Equatable { case human, json, csv }

    struct AddSource: Equatable {
        var name: String
        var kind: SourceKind
        var url: URL
        var ttlSeconds: Int
        var mode: SyncMode?
        var headers: [Source.Header]
        var tokenEnv: String?
        var maxBytes: Int?
        var caCert: String?
        var maxDelete: RemovalLimit?
        var alertAfterSeconds: Int?
        var layout: RecordLayout?
    }

    /// `sources set`: each field nil (or false) leaves that setting as it is.
    struct SetSource: Equatable {
        var name: String
        var url: URL?
        var ttlSeconds: Int?
        var mode: SyncMode?
        /// The new set of headers; `[]` with `--no-headers`.
        var headers: [Source.Header]?
        /// `.some(nil)` clears the token (`--no-token`).
        var tokenEnv: String??
        var maxBytes: Int?
        var caCert: String??
        var maxDelete: RemovalLimit?
        var alertAfterSeconds: Int?
        /// json and csv sources: each nil leaves that part of the layout as it is.
        var rows: JSONPath?
        var key: [JSONPath]?
        var next: RecordLayout.NextPage?
        var nextParam: String?
        var maxPages: Int?
        var delimiter: UInt8?

        var changesNothing: Bool {
            url == nil && ttlSeconds == nil && mode == nil && headers == nil && tokenEnv == nil && maxBytes == nil
                && caCert == nil && maxDelete == nil && alertAfterSeconds == nil
                && rows == nil && key == nil && next == nil && nextParam == nil && maxPages == nil && delimiter == nil
        }
    }

    struct Status: Equatable {
        var names: [String] = []
        var json = false
        /// `--max-age`: check that each source succeeded within this many seconds.
        var maxAge: Int?
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
    }

    case help(String)          // the command whose help to print; "" for the top level
    case version
    case completion(shell: String)
    case manpage
    case sourcesAdd(AddSource)
    case sourcesSet(SetSource)
    case sourcesList(json: Bool)
    case sourcesRemove(String, yes: Bool)
    case sync(Sync)
    case list(List)
    case status(Status)
    case metrics(textfile: String?)
    case history(source: String?, limit: Int?, json: Bool)
    case diff(source: String, selection: HistoryStore.Selection, json: Bool)
    case prune(keepSeconds: Int)
    case sql(query: String, format: Format)
    case check
    case export(source: String, format: ExportFormat)

    enum ExportFormat: Equatable { case json, csv, ndjson }
}

/// Global options that may stand anywhere before `--`.
struct Invocation: Equatable {
    var databasePath: String?
    /// `--color`: nil is `auto`.
    var color: ColorChoice? = nil
    var command: Command
}

/// `--color auto|always|never`. `auto` colours a terminal unless `NO_COLOR` is set or `TERM=dumb`.
enum ColorChoice: String, Equatable {
    case auto, always, never
}
