extension CacheError {
    /// Why a fetch produced nothing usable. The CLI maps each case to an exit code.
    ///
    /// ```swift
    /// if case .upstream(let error)? = try cache.sync("bank").failure, error.isRetryable { print("try later: \(error)") }
    /// ```
    public enum Upstream: Error, Sendable, Equatable, CustomStringConvertible {
        /// Could not connect, or the connection broke (refused, DNS, reset).
        case unreachable(url: String, reason: String)
        case timedOut(url: String, seconds: Double)
        /// The body arrived, but decoding it ran past the sync's deadline.
        case decodeTimedOut(seconds: Double)
        /// The body ended before the length the server announced.
        case truncated(url: String, received: Int, expected: Int)
        case tls(url: String, reason: String)
        /// An HTTP status other than 2xx and 304, with the server's Retry-After in seconds.
        case httpStatus(Int, url: String, retryAfter: Double? = nil)
        /// A 429, or a 403 with `X-RateLimit-Remaining: 0`, saying when the limit resets
        /// (`X-RateLimit-Reset` or `Retry-After`): seconds from now, if it did. `byResetHeader`: the
        /// time came from `X-RateLimit-Reset` (honoured up to a day; a `Retry-After` up to the
        /// backoff's cap).
        case rateLimited(Int, url: String, resetIn: Double?, byResetHeader: Bool = false)
        /// The body is not what the source's kind promises: not JSON, wrong shape, wrong type.
        case badData(String)
        /// The account envelope carried a status other than 200, or a null body.
        case envelope(status: Int, message: String)
        case tooLarge(limit: Int)
        case tooManyRedirects(url: String)
        /// A redirect or source URL with a scheme this tool refuses.
        case unsafeScheme(String)
        /// A URL libcurl cannot use (a port out of range, say).
        case badURL(String)
        /// The source's `--ca-cert` file cannot be read as a CA bundle.
        case caFile(path: String, reason: String)
        /// A `file:` source whose file is missing or unreadable: asking again will not help.
        case noFile(path: String)
        /// A `file:` source naming a FIFO, a device, a folder: only regular files are read.
        case notAFile(path: String, what: String)
        case missingToken(variable: String)
        /// A `${VAR}` in the source's URL or a header names a variable that is unset or empty, or set
        /// to a value holding a control character.
        case unfilledVariable(variable: String, control: Bool)
        /// The token variable's value holds a control character (a CR from a CRLF file, say).
        case badToken(variable: String)
        /// An OAuth2 token endpoint refused to give a token (400, 401 or 403: a wrong client id or
        /// secret, or a scope it does not grant); the credentials themselves are never named.
        case tokenRefused(url: String, status: Int)

        /// Whether the same request may succeed later: connection errors, timeouts, 408, 429,
        /// 5xx and truncated bodies. Bad data and other 4xx will not get better by asking again.
        public var isRetryable: Bool {
            switch self {
            case .unreachable, .timedOut, .truncated, .rateLimited: true
            case .decodeTimedOut: false  // the same body would take as long again
            case .httpStatus(let status, _, _): status == 408 || status == 429 || (500...599).contains(status)
            default: false
            }
        }

        /// The server's Retry-After, in seconds, if it sent one.
        public var retryAfter: Double? {
            switch self {
            case .httpStatus(_, _, let retryAfter): retryAfter
            case .rateLimited(_, _, let resetIn, _): resetIn
            default: nil
            }
        }

        public var description: String {
            switch self {
            case let .unreachable(url, reason): "cannot reach \(url): \(reason)"
            case let .timedOut(url, seconds): "timed out after \(Self.seconds(seconds)) waiting for \(url)"
            case let .decodeTimedOut(seconds): "timed out after \(Self.seconds(seconds)): the sync's time ran out while decoding the body"
            case let .truncated(url, received, expected) where expected < 0:
                "truncated body from \(url): the connection broke after \(received) bytes"
            case let .truncated(url, received, expected): "truncated body from \(url): \(received) of \(expected) bytes"
            case let .tls(url, reason): "TLS failure with \(url): \(reason)"
            case let .httpStatus(status, url, _): "HTTP \(status) from \(url)"
            case let .rateLimited(status, url, resetIn, _):
                "HTTP \(status) from \(url): rate limited" + (resetIn.map { "; the limit resets in \(DurationText.age(Int($0.rounded(.up))))" } ?? "")
            case let .badData(reason): "bad data: \(reason)"
            case let .envelope(status, message): "upstream answered status \(status): \(message)"
            case let .tooLarge(limit): "body larger than the \(limit)-byte cap"
            case let .tooManyRedirects(url): "too many redirects from \(url)"
            case let .unsafeScheme(scheme): "refused URL scheme '\(scheme)' (use http, https or file)"
            case let .badURL(reason): "unusable URL: \(reason)"
            case let .noFile(path): "no readable file at \(path)"
            case let .notAFile(path, what): "refused \(path): it is \(what), not a regular file"
            case let .caFile(path, reason): "cannot use the CA file \(path): \(reason)"
            case let .missingToken(variable): "the token variable \(variable) is not set"
            case let .unfilledVariable(variable, control):
                control ? "the variable \(variable), named as ${\(variable)} in the source's URL or headers, holds a control character such as a newline"
                        : "the variable \(variable), named as ${\(variable)} in the source's URL or headers, is not set"
            case let .badToken(variable): "the token variable \(variable) holds a control character (a stray CR from a CRLF file?)"
            case let .tokenRefused(url, status):
                "the token endpoint \(url) refused to give a token (HTTP \(status)): check the client id, the secret and the scope"
            }
        }

        private static func seconds(_ value: Double) -> String {
            value == value.rounded() ? "\(Int(value))s" : "\(value)s"
        }
    }
}

/// The engine's name for it; an app sees `CacheError.Upstream`.
package typealias UpstreamError = CacheError.Upstream
