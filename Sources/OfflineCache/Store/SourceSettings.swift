import FoundationEssentials

/// A source's settings as text, the way `cache sources add` and `cache sources set` take them:
/// one set of checks, with the same messages, for the command line and for apps. Nil leaves a
/// setting at its default (adding) or as it is (setting). A refusal names the command-line
/// option the field stands for (`ttl` is `--ttl`).
///
/// ```swift
/// try cache.addSource(name: "repos", kind: .json, url: "https://api.example.com/repos",
///                     SourceSettings(ttl: "1h", headers: ["Accept: application/json"], key: "id", next: "link"))
/// try cache.setSource(named: "repos", SourceSettings(ttl: "30m", maxDelete: "20%"))
/// ```
public struct SourceSettings: Sendable, Equatable {
    /// `http`, `https` or `file`; credentials in it are refused (use `tokenEnv` or a header).
    public var url: String?
    /// How long a row stays fresh after upstream confirms it: `90`, `90s`, `15m`, `2h`, `1d`, `1h30m`.
    public var ttl: String?
    /// `replace` or `merge`.
    public var mode: String?
    /// Request headers, each `"Name: value"`; `[]` removes them all.
    public var headers: [String]?
    /// The environment variable holding a bearer token; only its name is stored.
    public var tokenEnv: String?
    /// Removes the token variable (setting only).
    public var noToken = false
    /// The largest response accepted, in bytes.
    public var maxBytes: String?
    /// A PEM file of CAs trusted instead of the system's; stored as an absolute path.
    public var caCert: String?
    /// Trusts the system's CAs again (setting only).
    public var noCACert = false
    /// OAuth2 client credentials: the token endpoint (with `clientIDEnv` and `clientSecretEnv`).
    public var oauthTokenURL: String?
    /// The environment variables holding the OAuth2 client id and secret; only their names are stored.
    public var clientIDEnv: String?
    public var clientSecretEnv: String?
    /// The OAuth2 scope to ask for, if the endpoint wants one.
    public var scope: String?
    /// Drops the OAuth2 client (setting only).
    public var noOAuth = false
    /// How many rows one sync may remove before it is held: `20`, or `50%`.
    public var maxDelete: String?
    /// How long without a successful sync before `status --max-age` reports the source.
    public var alertAfter: String?
    /// `on` (the default) or `off`: whether `cache search` indexes the source's rows.
    public var search: String?
    /// json: where the records are (`$.results`).
    public var rows: String?
    /// json and csv: the fields that identify a record (`id`, or `user.id,repo`).
    public var key: String?
    /// json: `link`, or the path of the next page's URL or cursor (`$.next`).
    public var next: String?
    /// json: the query parameter a cursor, offset, page number or last key is sent as.
    public var nextParam: String?
    /// json, with `next: "page"`: the first page's number (1 unless set).
    public var firstPage: String?
    /// json, with `next: "last-key"`: the boolean that says more pages follow (`$.has_more`).
    public var hasMore: String?
    /// json: the most pages one sync reads.
    public var maxPages: String?
    /// json, incremental: the query parameter the watermark is sent as (`updated_since`).
    public var sinceParam: String?
    /// json, incremental: the field whose largest value is the watermark (`updated_at`).
    public var cursorField: String?
    /// json, incremental: how far before the watermark to ask from (`5m`; default none).
    public var lag: String?
    /// json, incremental: how often a sync is full, removing what upstream no longer has (default 1d).
    public var fullEvery: String?
    /// json: syncs are whole again, not incremental (setting only).
    public var noIncremental = false
    /// csv: the character between fields (`;`, `tab`).
    public var delimiter: String?

    public init(url: String? = nil, ttl: String? = nil, mode: String? = nil, headers: [String]? = nil,
                tokenEnv: String? = nil, noToken: Bool = false, maxBytes: String? = nil, caCert: String? = nil,
                noCACert: Bool = false, oauthTokenURL: String? = nil, clientIDEnv: String? = nil, clientSecretEnv: String? = nil,
                scope: String? = nil, noOAuth: Bool = false, maxDelete: String? = nil, alertAfter: String? = nil, rows: String? = nil,
                key: String? = nil, next: String? = nil, nextParam: String? = nil, firstPage: String? = nil,
                hasMore: String? = nil, maxPages: String? = nil, sinceParam: String? = nil, cursorField: String? = nil,
                lag: String? = nil, fullEvery: String? = nil, noIncremental: Bool = false, delimiter: String? = nil,
                search: String? = nil) {
        self.search = search
        self.url = url
        self.ttl = ttl
        self.mode = mode
        self.headers = headers
        self.tokenEnv = tokenEnv
        self.noToken = noToken
        self.maxBytes = maxBytes
        self.caCert = caCert
        self.noCACert = noCACert
        self.oauthTokenURL = oauthTokenURL
        self.clientIDEnv = clientIDEnv
        self.clientSecretEnv = clientSecretEnv
        self.scope = scope
        self.noOAuth = noOAuth
        self.maxDelete = maxDelete
        self.alertAfter = alertAfter
        self.rows = rows
        self.key = key
        self.next = next
        self.nextParam = nextParam
        self.firstPage = firstPage
        self.hasMore = hasMore
        self.maxPages = maxPages
        self.sinceParam = sinceParam
        self.cursorField = cursorField
        self.lag = lag
        self.fullEvery = fullEvery
        self.noIncremental = noIncremental
        self.delimiter = delimiter
    }

    /// A change that changes nothing, refused as a mistake.
    package static let nothingToChange = "Nothing to change: give at least one option, such as --ttl or --url."

    /// Durations as the messages show them.
    package static let durationExamples = "90, 90s, 15m, 2h, 1d or 1h30m"

    /// The settings, each checked and typed; nil where not given.
    package struct Checked: Equatable, Sendable {
        package var url: URL?
        package var ttl: Int?
        package var mode: SyncMode?
        package var headers: [Source.Header]?
        /// `.some(nil)` removes the token variable.
        package var tokenEnv: String??
        package var maxBytes: Int?
        /// `.some(nil)` trusts the system's CAs again.
        package var caCert: String??
        package var maxDelete: RemovalLimit?
        package var alertAfter: Int?
        package var search: Bool?
        package var oauthTokenURL: URL?
        package var clientIDEnv: String?
        package var clientSecretEnv: String?
        package var scope: String?
        package var clearOAuth = false
        package var clearIncremental = false

        /// Whether any OAuth2 option is given.
        var oauthGiven: Bool { oauthTokenURL != nil || clientIDEnv != nil || clientSecretEnv != nil || scope != nil }

        /// Why the OAuth2 options given cannot make (or change) `source`'s client, or nil.
        func oauthProblem(existing: Source.OAuthClient?, tokenEnv: String?) -> SourceRules.Problem? {
            if oauthGiven, existing == nil, oauthTokenURL == nil || clientIDEnv == nil || clientSecretEnv == nil {
                return SourceRules.Problem(message: "OAuth2 needs '--oauth-token-url <url>', '--client-id-env <var>' and '--client-secret-env <var>' together.")
            }
            if (existing != nil || oauthGiven), tokenEnv != nil {
                return SourceRules.Problem(message: "'--token-env' and '--oauth-token-url' both send the Authorization header: give one.")
            }
            return nil
        }
        package var rows: JSONPath?
        package var key: [JSONPath]?
        package var next: RecordLayout.NextPage?
        package var nextParam: String?
        package var firstPage: Int?
        package var hasMore: JSONPath?
        package var maxPages: Int?
        package var sinceParam: String?
        package var cursorField: JSONPath?
        package var lag: Int?
        package var fullEvery: Int?
        package var delimiter: UInt8?

        /// The layout options given, by their command-line names.
        package var layoutOptionsGiven: [String] {
            [("--rows", rows != nil), ("--key", key != nil), ("--next", next != nil), ("--next-param", nextParam != nil),
             ("--first-page", firstPage != nil), ("--has-more", hasMore != nil), ("--max-pages", maxPages != nil),
             ("--since-param", sinceParam != nil), ("--cursor-field", cursorField != nil), ("--lag", lag != nil),
             ("--full-every", fullEvery != nil), ("--no-incremental", clearIncremental), ("--delimiter", delimiter != nil)].filter(\.1).map(\.0)
        }

        /// Whether any incremental option is given.
        var incrementalGiven: Bool { sinceParam != nil || cursorField != nil || lag != nil || fullEvery != nil }

        /// Why the incremental options given cannot make (or change) `existing`'s, or nil.
        func incrementalProblem(existing: RecordLayout.Incremental?) -> SourceRules.Problem? {
            guard incrementalGiven, existing == nil, sinceParam == nil || cursorField == nil else { return nil }
            return SourceRules.Problem(message: "Incremental syncs need both '--since-param <name>' and '--cursor-field <field>'.")
        }

        package var changesNothing: Bool { self == Checked() }
    }
}
