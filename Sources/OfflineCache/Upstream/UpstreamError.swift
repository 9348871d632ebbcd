/// Why a fetch produced nothing usable. The CLI maps each case to an exit code.
public enum UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Could not connect, or the connection broke (refused, DNS, reset).
    case unreachable(url: String, reason: String)
    case timedOut(url: String, seconds: Double)
    /// The body ended before the length the server announced.
    case truncated(url: String, received: Int, expected: Int)
    case tls(url: String, reason: String)
    /// An HTTP status other than 2xx.
    case httpStatus(Int, url: String)
    /// The body is not what the source's kind promises: not JSON, wrong shape, wrong type.
    case badData(String)
    /// The account envelope carried a status other than 200, or a null body.
    case envelope(status: Int, message: String)
    case tooLarge(limit: Int)
    case tooManyRedirects(url: String)
    /// A redirect or source URL with a scheme this tool refuses.
    case unsafeScheme(String)
    case missingToken(variable: String)

    public var description: String {
        switch self {
        case let .unreachable(url, reason): "cannot reach \(url): \(reason)"
        case let .timedOut(url, seconds): "timed out after \(Self.seconds(seconds)) waiting for \(url)"
        case let .truncated(url, received, expected): "truncated body from \(url): \(received) of \(expected) bytes"
        case let .tls(url, reason): "TLS failure with \(url): \(reason)"
        case let .httpStatus(status, url): "HTTP \(status) from \(url)"
        case let .badData(reason): "bad data: \(reason)"
        case let .envelope(status, message): "upstream answered status \(status): \(message)"
        case let .tooLarge(limit): "body larger than the \(limit)-byte cap"
        case let .tooManyRedirects(url): "too many redirects from \(url)"
        case let .unsafeScheme(scheme): "refused URL scheme '\(scheme)' (use http, https or file)"
        case let .missingToken(variable): "the token variable \(variable) is not set"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))s" : "\(value)s"
    }
}
