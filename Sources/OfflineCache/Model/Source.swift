import FoundationEssentials

/// How a response is reconciled with the cache.
///
/// ```swift
/// try cache.addSource(name: "jokes", kind: .jokes, url: "https://jokes.example/jokes/ten", [.mode: "merge"])
/// ```
package enum SyncMode: String, Sendable, CaseIterable {
    /// Insert new rows, update changed ones, remove rows the response no longer has.
    case replace
    /// Insert or update by id; never remove a row because it is absent.
    case merge
}

extension Source {
    /// The kinds of upstream this tool understands: the two it was made for, any JSON API described
    /// by a `RecordLayout`, and CSV tables. What each is lives in its folder under `Kinds/`, and the
    /// registry there (`Kinds/SourceKind.swift`) is the one place that switches on it.
    ///
    /// ```swift
    /// try cache.addSource(name: "items", kind: .json, url: "https://api.example/items", [.key: "id"])
    /// ```
    public enum Kind: String, Sendable, CaseIterable {
        case account, jokes, json, csv, ndjson
    }
}

/// A configured upstream: its name, kind, URL and the settings its syncs follow.
///
/// ```swift
/// for source in try cache.sources() { print(source.name, source.kind, source.displayURL, source.ttlSeconds) }
/// ```
public struct Source: Sendable, Equatable {
    /// How long a row stays fresh by default: 15 minutes.
    public static let defaultTTL = 15 * 60
    /// The URL schemes a source may use.
    public static let allowedSchemes: Set<String> = ["http", "https", "file"]

    /// The source's name: letters, digits, `-`, `_` and `.`.
    public var name: String
    /// What the upstream serves, and how its rows are kept.
    public var kind: Source.Kind
    /// Where its rows come from.
    public var url: URL
    /// Whether a response is the whole truth (`replace`) or a sample (`merge`).
    package var mode: SyncMode
    /// How long a row stays fresh after upstream confirms it.
    public var ttlSeconds: Int
    /// Extra request headers, as `(name, value)`.
    public var headers: [Header]
    /// The environment variable whose value is sent as a bearer token; only its name is stored.
    public var tokenEnv: String?
    /// The names of stored headers that fail the header check (made by an older cache): they
    /// are not sent.
    package var unsentHeaders: [String] = []

    /// OAuth2 client credentials: a token asked for at sync time, sent as the bearer token.
    package var oauth: OAuthClient?
    /// HTTP Basic authentication from two variables (a `${VAR}` in a header cannot be
    /// base64-encoded): only their names are stored.
    package var basic: BasicAuth?

    /// `--basic-user-env VAR [--basic-password-env VAR]`: without a password's variable, the
    /// password is empty (an API key sent as the user name, as Stripe and Close take one).
    package struct BasicAuth: Sendable, Equatable {
        package var userEnv: String
        package var passwordEnv: String?
    }

    /// `--oauth-token-url URL --client-id-env VAR --client-secret-env VAR [--scope S]`: only the
    /// URL, the variables' names and the scope are stored; the secret and tokens never are.
    package struct OAuthClient: Sendable, Equatable {
        package var tokenURL: URL
        package var clientIDEnv: String
        package var clientSecretEnv: String
        package var scope: String?
        /// A refresh token's variable (`--refresh-token-env`): the refresh-token grant (RFC 6749
        /// §6) instead of client credentials.
        package var refreshTokenEnv: String?
    }

    /// The environment variables the source reads at sync time: its token's, its OAuth2
    /// client's, and each `${VAR}` in its URL and headers.
    public var variables: [String] {
        let names = [tokenEnv, oauth?.clientIDEnv, oauth?.clientSecretEnv, oauth?.refreshTokenEnv, basic?.userEnv, basic?.passwordEnv].compactMap { $0 }
        return names + templateVariables.filter { !names.contains($0) }
    }

    /// Each `${VAR}` of its URL and headers.
    package var templateVariables: [String] {
        var names: [String] = []
        for text in [url.absoluteString] + headers.map(\.value) {
            names += TemplateText.variables(in: text).filter { !names.contains($0) }
        }
        return names
    }

    /// The token variable (or OAuth2 client variable) this source names and `environment`
    /// lacks (unset or empty), if any: a read from such a shell must not start a refresh that
    /// can only fail (cron has the token).
    public func missingToken(in environment: [String: String]) -> String? {
        variables.first { (environment[$0] ?? "").isEmpty }
    }
    /// The largest body a sync accepts (nil: the default, 64 MiB).
    public var maxBytes: Int?
    /// A PEM bundle of CAs trusted instead of the system's; only its path is stored.
    public var caCert: String?
    /// How many cached rows one `replace` sync may remove before it is held (nil: the default).
    public var maxDelete: Source.RemovalLimit?
    /// How long the source may go without a successful sync before `status --max-age` reports
    /// it; nil: the age given on the command line.
    public var alertAfterSeconds: Int?
    /// For `json` sources: where the records are and what identifies them.
    package var layout: RecordLayout?
    /// For sources that keep records: where and how local edits are written (`--write-url`…).
    package var writing = Writing()
    /// Whether the source's rows are kept in the full-text index `cache search` reads (on unless
    /// `--search off`: indexing a million json records takes about twice as long as syncing them).
    public var searchable = true
    /// Which row of `sources` this was read from (its rowid and creation time): a source removed
    /// and added again under the same name is another source, and a sync of the old one must
    /// not land in it. Nil for a source not read from the database.
    public var identity: String?

    /// A request header the source sends with each fetch.
    ///
    /// ```swift
    /// for header in source.headers { print(header.name) }   // values may be secrets: shown by name
    /// ```
    public struct Header: Sendable, Equatable {
        /// The header's name.
        public var name: String
        /// The header's value.
        public var value: String
        /// A header `name: value`.
        public init(name: String, value: String) { self.name = name; self.value = value }

        /// Parses `Name: value`.
        public init?(line: String) {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingSpaces()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            let token = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".unicodeScalars)
            // Checked on Unicode scalars: Swift reads "\r\n" as one Character, equal to neither
            // "\r" nor "\n", so a Character test would let a header smuggle a second one in.
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(token.contains),
                  !value.unicodeScalars.contains(where: Self.isControl) else { return nil }
            self.init(name: name, value: value)
        }

        /// C0 controls (tab, CR and LF among them), DEL and C1 controls.
        public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        }

        /// The header as it is sent: `Name: value`.
        public var line: String { "\(name): \(value)" }
    }

    /// Source names are used in commands and file-like contexts: letters, digits, `-`, `_`, `.`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && !name.hasPrefix("-")
            && name.unicodeScalars.allSatisfy { $0.isASCII && (Character($0).isLetter || Character($0).isNumber || "-_.".unicodeScalars.contains($0)) }
    }

    /// The URL as it may appear in messages: no credentials, no secret query values, no
    /// fragment; a `${VAR}` shown as written.
    public var displayURL: String {
        TemplateText.asWritten(Self.redacted(url))
    }

    /// The URL with any credentials in it replaced, for messages and logs; `hiding` names
    /// more parameters to hide (those a source fills from the environment).
    public static func redacted(_ url: URL) -> String { redacted(url, hiding: []) }

    package static func redacted(_ url: URL, hiding names: Set<String>) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(unprintable URL)" }
        parts.user = nil
        parts.password = nil
        parts.fragment = nil
        // The query stays (page=2 tells sources apart); values that look secret do not.
        parts.percentEncodedQueryItems = parts.percentEncodedQueryItems?.map { item in
            (isSecret(item.name) || names.contains(item.name)) && !(item.value ?? "").isEmpty ? URLQueryItem(name: item.name, value: "REDACTED") : item
        }
        return parts.string ?? "(unprintable URL)"
    }

    /// Query parameter names that carry credentials: `token`, `api_key`, `X-Amz-Signature`,
    /// `apikey`, ... judged by the words of the name (`monkey` is not a key).
    static func isSecret(_ name: String) -> Bool {
        let lowered = (name.percentDecoded ?? name).lowercased()
        let words = lowered.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        let secretWords: Set<String> = ["token", "key", "secret", "password", "passwd", "pwd", "sig", "signature", "auth",
                                        "credential", "credentials", "session", "apikey", "accesstoken", "authtoken", "sessionid"]
        return words.contains(where: secretWords.contains)
    }
}

/// The engine's name for it; an app sees `Source.Kind`.
package typealias SourceKind = Source.Kind
