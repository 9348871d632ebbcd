import CSQLite
import CurlShim

/// The version this build reports with `--version` and in its User-Agent.
package enum CacheVersion {
    package static let string = "0.1.0"

    /// The SQLite library this process runs with.
    package static var sqlite: String { String(cString: sqlite3_libversion()) }

    /// The libcurl this was built against. The library itself is loaded only when a fetch needs
    /// it: loaded at start, `cache --version` would take several times as long as `sqlite3
    /// -version` (figures: docs/performance.md); and
    /// on Debian-like systems it comes from the same package as the headers.
    package static var libcurl: String { String(cString: cache_curl_header_version()) }

    /// What `cache --version`, `-V` and `cache version` print.
    package static var report: String {
        "cache \(string)\nSQLite \(sqlite)\nlibcurl \(libcurl) (built against; loaded on the first http or https fetch)\n"
    }
}
