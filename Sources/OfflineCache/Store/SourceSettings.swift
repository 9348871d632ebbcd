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
                lag: String? = nil, fullEvery: String? = nil, noIncremental: Bool = false, delimiter: String? = nil) {
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

    /// Why a layout's paging options do not go together, or nil.
    package static func pagingProblem(_ layout: RecordLayout) -> SourceRules.Problem? {
        let problem = { (text: String) in SourceRules.Problem(message: text) }
        if layout.nextParam != nil, layout.next == nil || layout.next == .link {
            return problem("'--next-param' needs '--next <style>' other than link: a path, header:NAME, offset, page or last-key.")
        }
        if let next = layout.next, next.needsParam, layout.nextParam == nil {
            return problem("'--next \(next.description)' needs '--next-param <name>': the query parameter it sets.")
        }
        if layout.firstPage != nil, layout.next != .page { return problem("'--first-page' is for '--next page'.") }
        if layout.next == .lastKey, layout.hasMore == nil {
            return problem("'--next last-key' needs '--has-more <path>': the boolean that says more pages follow.")
        }
        if layout.hasMore != nil, layout.next != .lastKey { return problem("'--has-more' is for '--next last-key'.") }
        return nil
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

    /// Each setting checked on its own (a kind's options are checked by `newSource` and `refusal(for:)`).
    package func checked() throws(SourceRules.Problem) -> Checked {
        func invalid(_ value: String, _ option: String, _ expected: String) -> SourceRules.Problem {
            SourceRules.Problem(message: "Invalid value '\(value)' for '\(option)': expected \(expected).")
        }
        func duration(_ text: String?, _ option: String) throws(SourceRules.Problem) -> Int? {
            guard let text else { return nil }
            guard let seconds = DurationText.seconds(text) else { throw invalid(text, option, "a duration such as \(Self.durationExamples)") }
            return seconds
        }
        var checked = Checked()
        if let text = delimiter {
            guard let byte = RecordLayout.delimiter(text) else { throw invalid(text, "--delimiter", "one character such as , ; | or tab (not a quote)") }
            checked.delimiter = byte
        }
        if let text = rows {
            guard text.hasPrefix("$"), let path = JSONPath(text) else { throw invalid(text, "--rows", "a path such as $, $.results or $.data.items") }
            checked.rows = path
        }
        if let text = key {
            let fields = JSONPath.fields(text)
            guard !fields.isEmpty, fields.allSatisfy({ $0 != nil && !$0!.keys.isEmpty }) else {
                throw invalid(text, "--key", "field names such as id, or user.id,repo")
            }
            checked.key = fields.compactMap { $0 }
        }
        if let text = next {
            // A body path is written with its `$`: a bare word is a mistake, not a field.
            guard let next = RecordLayout.NextPage(text), text.hasPrefix("$") || !next.isBodyPath else {
                throw invalid(text, "--next", "link, offset, page, last-key, header:NAME, or a path such as $.next")
            }
            checked.next = next
        }
        if let text = firstPage {
            guard let number = Int(text), (0...1_000_000).contains(number) else { throw invalid(text, "--first-page", "a page number such as 0 or 1") }
            checked.firstPage = number
        }
        if let text = hasMore {
            guard text.hasPrefix("$"), let path = JSONPath(text), !path.keys.isEmpty else { throw invalid(text, "--has-more", "a path such as $.has_more") }
            checked.hasMore = path
        }
        let isParameter = { (name: String) in !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.[]".contains($0)) } }
        if let text = nextParam {
            guard isParameter(text) else {
                throw invalid(text, "--next-param", "a query parameter name")
            }
            checked.nextParam = text
        }
        if let text = sinceParam {
            guard isParameter(text) else {
                throw invalid(text, "--since-param", "a query parameter name")
            }
            checked.sinceParam = text
        }
        if let text = cursorField {
            guard let path = JSONPath(text), !path.keys.isEmpty, !path.keys.contains(where: { $0.contains("\"") || $0.contains("\\") }) else {
                throw invalid(text, "--cursor-field", "a field name such as updated_at, or meta.updated")
            }
            checked.cursorField = path
        }
        // No lag is a lag of 0.
        checked.lag = lag == "0" ? 0 : try duration(lag, "--lag")
        checked.fullEvery = try duration(fullEvery, "--full-every")
        checked.clearIncremental = noIncremental
        checked.clearOAuth = noOAuth
        if let text = maxPages {
            guard let count = Int(text), (1...100_000).contains(count) else { throw invalid(text, "--max-pages", "a number of pages from 1") }
            checked.maxPages = count
        }
        if let url {
            switch SourceRules.url(url) {
            case .success(let parsed): checked.url = parsed
            case .failure(let problem): throw problem
            }
        }
        checked.ttl = try duration(ttl, "--ttl")
        if let text = mode {
            guard let parsed = SyncMode(rawValue: text) else { throw invalid(text, "--mode", "replace or merge") }
            checked.mode = parsed
        }
        if let headers {
            var parsed: [Source.Header] = []
            for line in headers {
                guard let header = Source.Header(line: line) else { throw invalid(line, "--header", "\"Name: value\"") }
                parsed.append(header)
            }
            checked.headers = parsed
        }
        let isVariable = { (name: String) in !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } }
        if let tokenEnv {
            guard isVariable(tokenEnv) else { throw invalid(tokenEnv, "--token-env", "an environment variable name") }
            checked.tokenEnv = .some(tokenEnv)
        }
        if let text = oauthTokenURL {
            let parsed: URL
            switch SourceRules.url(text, option: "--oauth-token-url") {
            case .success(let url): parsed = url
            case .failure(let problem): throw problem
            }
            guard ["http", "https"].contains(parsed.scheme?.lowercased() ?? "") else {
                throw invalid(text, "--oauth-token-url", "an http or https URL")
            }
            checked.oauthTokenURL = parsed
        }
        for (value, option) in [(clientIDEnv, "--client-id-env"), (clientSecretEnv, "--client-secret-env")] {
            if let value, !isVariable(value) { throw invalid(value, option, "an environment variable name") }
        }
        checked.clientIDEnv = clientIDEnv
        checked.clientSecretEnv = clientSecretEnv
        if let scope {
            guard !scope.isEmpty, !scope.unicodeScalars.contains(where: Source.Header.isControl) else {
                throw invalid(scope, "--scope", "scope names, separated by spaces")
            }
            checked.scope = scope
        }
        if noToken { checked.tokenEnv = .some(nil) }
        if let text = maxBytes {
            guard let value = Int(text), (1...FetchRequest.largestMaxBytes).contains(value) else {
                throw invalid(text, "--max-bytes", "a number of bytes from 1 to \(FetchRequest.largestMaxBytes) (16 GiB)")
            }
            checked.maxBytes = value
        }
        if let caCert {
            // Stored absolute: cron and the background refresh run from other folders.
            let absolute = caCert.hasPrefix("/") ? caCert : FileManager.default.currentDirectoryPath + "/" + caCert
            guard FileManager.default.isReadableFile(atPath: absolute) else {
                throw invalid(caCert, "--ca-cert", "a readable PEM file of CA certificates")
            }
            checked.caCert = .some(absolute)
        }
        if noCACert { checked.caCert = .some(nil) }
        if let text = maxDelete {
            guard let limit = RemovalLimit(text) else { throw invalid(text, "--max-delete", "a number of rows such as 20, or a percentage such as 50%") }
            checked.maxDelete = limit
        }
        checked.alertAfter = try duration(alertAfter, "--alert-after")
        return checked
    }

    /// A new source of `kind` with these settings, checked as `cache sources add` checks it.
    package func newSource(name: String, kind: SourceKind) throws(SourceRules.Problem) -> Source {
        if let problem = SourceRules.nameProblem(name) { throw SourceRules.Problem(message: problem) }
        let checked = try checked()
        guard let url = checked.url else {
            throw SourceRules.Problem(message: "A source needs '--url <url>': where its data is fetched from.")
        }
        if let option = checked.layoutOptionsGiven.first(where: { !kind.layoutOptions.contains($0) }) {
            throw SourceRules.Problem(message: SourceRules.notForKind(option))
        }
        var layout: RecordLayout?
        if kind.keepsRecords {
            guard let key = checked.key else { throw SourceRules.Problem(message: SourceRules.missingKey(kind)) }
            let paged = RecordLayout(rows: checked.rows ?? JSONPath(), key: key, next: checked.next, nextParam: checked.nextParam,
                                     firstPage: checked.firstPage, hasMore: checked.hasMore,
                                     maxPages: checked.maxPages ?? RecordLayout.defaultMaxPages, delimiter: checked.delimiter)
            if let problem = Self.pagingProblem(paged) { throw problem }
            if let problem = checked.incrementalProblem(existing: nil) { throw problem }
            layout = paged
            checked.apply(to: &layout!)
        }
        if let problem = checked.oauthProblem(existing: nil, tokenEnv: checked.tokenEnv ?? nil) { throw problem }
        var source = Source(name: name, kind: kind, url: url, mode: checked.mode, ttlSeconds: checked.ttl ?? Source.defaultTTL,
                            headers: checked.headers ?? [], tokenEnv: checked.tokenEnv ?? nil, maxBytes: checked.maxBytes,
                            caCert: checked.caCert ?? nil, maxDelete: checked.maxDelete, alertAfterSeconds: checked.alertAfter,
                            layout: layout)
        checked.apply(to: &source)
        return source
    }
}

extension SourceSettings.Checked {
    /// Why these settings cannot be applied to `source`, as `cache sources set` says it; nil
    /// when they can.
    package func refusal(for source: Source) -> SourceRules.Problem? {
        if let option = layoutOptionsGiven.first(where: { !source.kind.layoutOptions.contains($0) }) {
            return SourceRules.Problem(message: "'\(option)' is for \(SourceRules.kinds(taking: option)) sources; '\(source.name)' is \(source.kind.rawValue).")
        }
        if let problem = incrementalProblem(existing: clearIncremental ? nil : source.layout?.incremental) { return problem }
        let tokenEnvAfter = tokenEnv ?? source.tokenEnv
        if let problem = oauthProblem(existing: clearOAuth ? nil : source.oauth, tokenEnv: tokenEnvAfter) { return problem }
        var changed = source
        apply(to: &changed)
        return changed.layout.flatMap(SourceSettings.pagingProblem)
    }

    /// Applies the settings given to `source` (after `refusal(for:)` found none).
    package func apply(to source: inout Source) {
        if var layout = source.layout {
            apply(to: &layout)
            source.layout = layout
        }
        if let url { source.url = url }
        if let ttl { source.ttlSeconds = ttl }
        if let mode { source.mode = mode }
        if let headers { source.headers = headers }
        if let tokenEnv { source.tokenEnv = tokenEnv }
        if let maxBytes { source.maxBytes = maxBytes }
        if let caCert { source.caCert = caCert }
        if let maxDelete { source.maxDelete = maxDelete }
        if let alertAfter { source.alertAfterSeconds = alertAfter }
        if clearOAuth { source.oauth = nil }
        if oauthGiven {
            // A new client needs all three (`oauthProblem` says so); an existing one changes in part.
            if var client = source.oauth ?? oauthTokenURL.flatMap({ url in clientIDEnv.flatMap { id in clientSecretEnv.map {
                Source.OAuthClient(tokenURL: url, clientIDEnv: id, clientSecretEnv: $0) } } }) {
                if let oauthTokenURL { client.tokenURL = oauthTokenURL }
                if let clientIDEnv { client.clientIDEnv = clientIDEnv }
                if let clientSecretEnv { client.clientSecretEnv = clientSecretEnv }
                if let scope { client.scope = scope }
                source.oauth = client
            }
        }
    }

    /// Applies the layout settings given to `layout`.
    func apply(to layout: inout RecordLayout) {
        let before = layout.next
        if let rows { layout.rows = rows }
        if let key { layout.key = key }
        if let next { layout.next = next }
        if let nextParam { layout.nextParam = nextParam }
        if let firstPage { layout.firstPage = firstPage }
        if let hasMore { layout.hasMore = hasMore }
        // Options that belong to another style go with it.
        if let next, next != .page, firstPage == nil { layout.firstPage = nil }
        if let next, next != .lastKey, hasMore == nil { layout.hasMore = nil }
        // A parameter the old style set means nothing to a link or a body URL: it goes too,
        // unless given again (a body cursor takes one).
        if let next, !next.needsParam, nextParam == nil, next == .link || before?.needsParam == true { layout.nextParam = nil }
        if let maxPages { layout.maxPages = maxPages }
        if let delimiter { layout.delimiter = delimiter }
        if clearIncremental { layout.incremental = nil }
        if incrementalGiven {
            // A new one needs both names (`incrementalProblem` says so); an existing one changes in part.
            if var incremental = layout.incremental ?? sinceParam.flatMap({ parameter in
                cursorField.map { RecordLayout.Incremental(sinceParam: parameter, cursorField: $0) } }) {
                if let sinceParam { incremental.sinceParam = sinceParam }
                if let cursorField { incremental.cursorField = cursorField }
                if let lag { incremental.lagSeconds = lag }
                if let fullEvery { incremental.fullEverySeconds = fullEvery }
                layout.incremental = incremental
            }
        }
    }
}
