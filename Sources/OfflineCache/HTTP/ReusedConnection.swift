import CurlShim
import FoundationEssentials

/// A libcurl handle kept across requests, so they reuse its connections (keep-alive) instead of
/// opening one each: a push's worker sends thousands of small writes to one upstream. Used by one
/// request at a time (its worker's); its options are cleared after each (`curl_easy_reset`,
/// which keeps the connections).
package final class ReusedConnection: @unchecked Sendable {
    private var kept: UnsafeMutableRawPointer?

    package init() {}

    /// The handle, made on the first request (libcurl is loaded by then).
    func handle() -> UnsafeMutableRawPointer? {
        if kept == nil { kept = cache_curl_easy_init() }
        return kept
    }

    deinit {
        if let kept { cache_curl_easy_cleanup(kept) }
    }
}
