import FoundationEssentials

/// The options every kind takes, declared once (see `SourceOption`), in the order help, `sources
/// set`'s report and `sources list --json` show them. A kind's own options are declared in its folder.
extension SourceOption {
    /// `--url`: An http, https or file URL.
    public static let url = Source.Option(
        "url", "url", help: "An http, https or file URL.",
        changingNote: " A new URL keeps the rows but marks them stale, and drops the stored validators, until the next sync.",
        effects: [.abortsSync, .unconfirms], listed: { [("url", .string($0.displayURL))] },
        text: { [$0.url.absoluteString] }, show: { $0.displayURL }
    ) { source, given throws(SourceRules.Problem) in
        let parsed: URL
        if given.isNew {
            parsed = try SourceRules.url(given.value).get()
        } else {
            guard let url = URL(string: given.value) else { throw SourceRules.Problem(message: "its URL cannot be read") }
            parsed = url
        }
        source.url = parsed
    }

    /// `--ttl`: How long a row stays fresh after upstream confirms it: …
    public static let ttl = Source.Option(
        "ttl", "duration", help: "How long a row stays fresh after upstream confirms it: \(durationExamples)",
        addingNote: " (default: 15m).", changingNote: ".", listed: { [("ttl_s", .int($0.ttlSeconds))] },
        text: { $0.ttlSeconds == Source.defaultTTL ? nil : [DurationText.format($0.ttlSeconds)] },
        show: { DurationText.format($0.ttlSeconds) }
    ) { source, given throws(SourceRules.Problem) in
        source.ttlSeconds = try duration(given, "--ttl")
    }

    /// `--mode`: Replace (the response is the whole truth) or merge (a sample; never remove).
    public static let mode = Source.Option(
        "mode", "mode", help: "replace (the response is the whole truth) or merge (a sample; never remove).",
        addingNote: " Default: replace, but merge for jokes.", choices: SyncMode.allCases.map(\.rawValue),
        effects: [.abortsSync], listed: { [("mode", .string($0.mode.rawValue))] },
        text: { $0.mode == $0.kind.defaultMode ? nil : [$0.mode.rawValue] }, show: { $0.mode.rawValue }
    ) { source, given throws(SourceRules.Problem) in
        guard let mode = SyncMode(rawValue: given.value) else { throw invalid(given.value, "--mode", "replace or merge") }
        source.mode = mode
    }

    /// `--header`: An extra request header, "Name: value", sent only to the URL's origin. Repeatable
    public static let header = Source.Option(
        "header", "header", help: "An extra request header, \"Name: value\", sent only to the URL's origin. Repeatable",
        addingNote: ".", changingNote: "; the headers given replace the stored ones.", repeatable: true, shown: "headers",
        listed: { [("headers", .array($0.headers.map { .string($0.name) })), ("unsent_headers", .array($0.unsentHeaders.map { .string($0) }))] },
        text: { $0.headers.isEmpty ? nil : $0.headers.map(\.line) },
        show: { $0.headers.isEmpty ? "none" : $0.headers.map(\.name).joined(separator: ", ") }
    ) { source, given throws(SourceRules.Problem) in
        source.headers = []
        source.unsentHeaders = []
        for line in given.values {
            if let header = Source.Header(line: line) {
                source.headers.append(header)
            } else if given.isNew {
                throw invalid(line, "--header", "\"Name: value\"")
            } else {
                // Stored before today's header check, and failing it: not sent, and named (a
                // value may be a secret) so `sources list` can say so.
                source.unsentHeaders.append(String(line.prefix { $0 != ":" }).trimmingSpaces())
            }
        }
    }

    /// `--no-headers`: Send no extra headers.
    public static let noHeaders = Source.Option(clearing: "no-headers", help: "Send no extra headers.", clears: ["header"])

    /// `--token-env`: Send $VAR as a bearer token at sync time; only the variable's name is stored.
    public static let tokenEnv = Source.Option(
        "token-env", "var", help: "Send $VAR as a bearer token at sync time; only the variable's name is stored.",
        shown: "token", listed: { [("token_env", .optional($0.tokenEnv))] },
        text: { $0.tokenEnv.map { [$0] } }, show: { $0.tokenEnv.map { "$\($0)" } ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        source.tokenEnv = try variable(given, "--token-env")
    }

    /// `--no-token`: Send no bearer token.
    public static let noToken = Source.Option(clearing: "no-token", help: "Send no bearer token.", clears: ["token-env"])

    /// `--oauth-token-url`: OAuth2 client credentials: ask this token endpoint for the bearer token (with --client-id-env and --client-secret-env).
    public static let oauthTokenURL = Source.Option(
        "oauth-token-url", "url",
        help: "OAuth2 client credentials: ask this token endpoint for the bearer token (with --client-id-env and --client-secret-env).",
        listed: { [("oauth_token_url", .optional($0.oauth.map { Source.redacted($0.tokenURL) }))] },
        text: { $0.oauth.map { [$0.tokenURL.absoluteString] } }, show: { $0.oauth.map { Source.redacted($0.tokenURL) } ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let text = given.value
        guard given.isNew else {
            guard let url = URL(string: text) else { throw SourceRules.Problem(message: "its OAuth2 token URL cannot be read") }
            source.oauthClient { $0.tokenURL = url }
            return
        }
        let parsed = try SourceRules.url(text, option: "--oauth-token-url").get()
        guard ["http", "https"].contains(parsed.scheme?.lowercased() ?? "") else {
            throw invalid(text, "--oauth-token-url", "an http or https URL")
        }
        // The client secret goes to the token endpoint: RFC 6749 (3.2) requires TLS there.
        // Plain http only to this machine, for tests and local tools.
        if parsed.scheme?.lowercased() == "http", !SourceRules.isLoopback(parsed.host ?? "") {
            throw invalid(text, "--oauth-token-url", "an https URL: over http the client secret would cross the network in clear (RFC 6749 requires TLS for the token endpoint; http is allowed to a loopback address only)")
        }
        source.oauthClient { $0.tokenURL = parsed }
    }

    /// `--client-id-env`: OAuth2: the variable holding the client id; only its name is stored.
    public static let clientIDEnv = Source.Option(
        "client-id-env", "var", help: "OAuth2: the variable holding the client id; only its name is stored.",
        listed: { [("client_id_env", .optional($0.oauth?.clientIDEnv))] },
        text: { $0.oauth.map { [$0.clientIDEnv] } }, show: { $0.oauth.map { "$" + $0.clientIDEnv } ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let name = try variable(given, "--client-id-env")
        source.oauthClient { $0.clientIDEnv = name }
    }

    /// `--client-secret-env`: OAuth2: the variable holding the client secret; only its name is stored.
    public static let clientSecretEnv = Source.Option(
        "client-secret-env", "var", help: "OAuth2: the variable holding the client secret; only its name is stored.",
        listed: { [("client_secret_env", .optional($0.oauth?.clientSecretEnv))] },
        text: { $0.oauth.map { [$0.clientSecretEnv] } }, show: { $0.oauth.map { "$" + $0.clientSecretEnv } ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let name = try variable(given, "--client-secret-env")
        source.oauthClient { $0.clientSecretEnv = name }
    }

    /// `--scope`: OAuth2: the scope to ask for, if the endpoint wants one.
    public static let scope = Source.Option(
        "scope", "scope", help: "OAuth2: the scope to ask for, if the endpoint wants one.",
        listed: { [("scope", .optional($0.oauth?.scope))] },
        text: { $0.oauth?.scope.map { [$0] } }, show: { $0.oauth?.scope ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let scope = given.value
        guard !scope.isEmpty, !scope.unicodeScalars.contains(where: Source.Header.isControl) else {
            throw invalid(scope, "--scope", "scope names, separated by spaces")
        }
        source.oauthClient { $0.scope = scope }
    }

    /// `--refresh-token-env`: OAuth2: the variable holding a refresh token; the token endpoint is asked with the refresh-token grant instead of client credentials. Only its name is stored.
    public static let refreshTokenEnv = Source.Option(
        "refresh-token-env", "var",
        help: "OAuth2: the variable holding a refresh token; the token endpoint is asked with the refresh-token grant instead of client credentials. Only its name is stored.",
        listed: { [("refresh_token_env", .optional($0.oauth?.refreshTokenEnv))] },
        text: { $0.oauth?.refreshTokenEnv.map { [$0] } }, show: { $0.oauth?.refreshTokenEnv.map { "$" + $0 } ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let name = try variable(given, "--refresh-token-env")
        source.oauthClient { $0.refreshTokenEnv = name }
    }

    /// `--no-oauth`: Ask no token endpoint: drop the OAuth2 client.
    public static let noOAuth = Source.Option(
        clearing: "no-oauth", help: "Ask no token endpoint: drop the OAuth2 client.",
        clears: ["oauth-token-url", "client-id-env", "client-secret-env", "scope", "refresh-token-env"])

    /// `--basic-user-env`: HTTP Basic authentication: the variable holding the user name (or an API key sent as one); only its name is stored.
    public static let basicUserEnv = Source.Option(
        "basic-user-env", "var", help: "HTTP Basic authentication: the variable holding the user name (or an API key sent as one); only its name is stored.",
        listed: { [("basic_user_env", .optional($0.basic?.userEnv))] },
        text: { $0.basic.map { [$0.userEnv] } }, show: { $0.basic.map { "$" + $0.userEnv } ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let name = try variable(given, "--basic-user-env")
        source.basic = Source.BasicAuth(userEnv: name, passwordEnv: source.basic?.passwordEnv)
    }

    /// `--basic-password-env`: HTTP Basic authentication: the variable holding the password (with --basic-user-env; default: an empty password); only its name is stored.
    public static let basicPasswordEnv = Source.Option(
        "basic-password-env", "var", help: "HTTP Basic authentication: the variable holding the password (with --basic-user-env; default: an empty password); only its name is stored.",
        listed: { [("basic_password_env", .optional($0.basic?.passwordEnv))] },
        text: { $0.basic?.passwordEnv.map { [$0] } }, show: { $0.basic?.passwordEnv.map { "$" + $0 } ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let name = try variable(given, "--basic-password-env")
        source.basic = Source.BasicAuth(userEnv: source.basic?.userEnv ?? "", passwordEnv: name)
    }

    /// `--no-basic`: Send no HTTP Basic authentication.
    public static let noBasic = Source.Option(
        clearing: "no-basic", help: "Send no HTTP Basic authentication.", clears: ["basic-user-env", "basic-password-env"])

    /// `--max-bytes`: Refuse bodies larger than this, decoded (default: 64 MiB).
    public static let maxBytes = Source.Option(
        "max-bytes", "n", help: "Refuse bodies larger than this, decoded (default: 64 MiB).",
        listed: { [("max_bytes", .optional($0.maxBytes))] },
        text: { $0.maxBytes.map { [String($0)] } }, show: { $0.maxBytes.map(String.init) ?? "default" }
    ) { source, given throws(SourceRules.Problem) in
        // A cap stored larger (by an older cache, or by hand) is held to the largest at fetch time.
        guard let value = Int(given.value), value >= 1, !given.isNew || value <= FetchRequest.largestMaxBytes else {
            throw invalid(given.value, "--max-bytes", "a number of bytes from 1 to \(FetchRequest.largestMaxBytes) (16 GiB)")
        }
        source.maxBytes = value
    }

    /// `--ca-cert`: Trust the CAs in this PEM file instead of the system's (internal CAs).
    public static let caCert = Source.Option(
        "ca-cert", "file", help: "Trust the CAs in this PEM file instead of the system's (internal CAs).", isFile: true,
        listed: { [("ca_cert", .optional($0.caCert))] },
        text: { $0.caCert.map { [$0] } }, show: { $0.caCert ?? "system" }
    ) { source, given throws(SourceRules.Problem) in
        guard given.isNew else { source.caCert = given.value; return }
        // Stored absolute: cron and the background refresh run from other folders.
        let text = given.value
        let absolute = text.hasPrefix("/") ? text : FileManager.default.currentDirectoryPath + "/" + text
        guard FileManager.default.isReadableFile(atPath: absolute) else {
            throw invalid(text, "--ca-cert", "a readable PEM file of CA certificates")
        }
        source.caCert = absolute
    }

    /// `--no-ca-cert`: Trust the system's CAs again.
    public static let noCACert = Source.Option(clearing: "no-ca-cert", help: "Trust the system's CAs again.", clears: ["ca-cert"])

    /// `--max-delete`: Hold a replace sync that would remove more cached rows than this (default: 50%; only 100% allows emptying the cache).
    public static let maxDelete = Source.Option(
        "max-delete", "n|p%",
        help: "Hold a replace sync that would remove more cached rows than this (default: 50%; only 100% allows emptying the cache).",
        effects: [.abortsSync], listed: { [("max_delete", .string(($0.maxDelete ?? .default).description))] },
        text: { $0.maxDelete.map { [$0.description] } }, show: { ($0.maxDelete ?? .default).description }
    ) { source, given throws(SourceRules.Problem) in
        guard let limit = RemovalLimit(given.value) else {
            throw invalid(given.value, "--max-delete", "a number of rows such as 20, or a percentage such as 50%")
        }
        source.maxDelete = limit
    }

    /// `--alert-after`: The age past which 'status --max-age' reports this source, instead of the age given there.
    public static let alertAfter = Source.Option(
        "alert-after", "duration", help: "The age past which 'status --max-age' reports this source, instead of the age given there.",
        listed: { [("alert_after_s", .optional($0.alertAfterSeconds))] },
        text: { $0.alertAfterSeconds.map { [DurationText.format($0)] } }, show: { $0.alertAfterSeconds.map(DurationText.format) ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        source.alertAfterSeconds = try duration(given, "--alert-after")
    }

    /// `--search`: Keep the rows in the full-text index 'cache search' reads (default: on; indexing a million json records takes about twice as long as syncing them).
    public static let search = Source.Option(
        "search", "on|off",
        help: "Let 'cache search' find the rows (default: on). The index is built on the source's first search (or by 'cache reindex'), then kept in step by every sync: a source nobody searches costs nothing at sync time.",
        choices: ["on", "off"], listed: { [("search", .bool($0.searchable))] },
        text: { $0.searchable ? nil : ["off"] }, show: { $0.searchable ? "on" : "off" }
    ) { source, given throws(SourceRules.Problem) in
        guard given.value == "on" || given.value == "off" else { throw invalid(given.value, "--search", "on or off") }
        source.searchable = given.value == "on"
    }

    /// The options every kind takes.
    static let common: [SourceOption] = [
        url, ttl, mode, header, noHeaders, tokenEnv, noToken, oauthTokenURL, clientIDEnv, clientSecretEnv, scope, refreshTokenEnv, noOAuth,
        basicUserEnv, basicPasswordEnv, noBasic, maxBytes, caCert, noCACert, maxDelete, alertAfter, search,
    ]

    /// Why the common options given together cannot make `source`, or nil.
    static func commonProblem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem? {
        if source.oauth != nil, [oauthTokenURL, clientIDEnv, clientSecretEnv].contains(where: { settings[$0] == nil }) {
            return SourceRules.Problem(message: "OAuth2 needs '--oauth-token-url <url>', '--client-id-env <var>' and '--client-secret-env <var>' together.")
        }
        if source.oauth != nil, source.tokenEnv != nil {
            return SourceRules.Problem(message: "'--token-env' and '--oauth-token-url' both send the Authorization header: give one.")
        }
        if source.basic != nil, settings[basicUserEnv] == nil {
            return SourceRules.Problem(message: "HTTP Basic needs '--basic-user-env <var>' (and '--basic-password-env <var>' unless the password is empty).")
        }
        if source.basic != nil, source.tokenEnv != nil || source.oauth != nil {
            return SourceRules.Problem(message: "'--basic-user-env' and '\(source.oauth != nil ? "--oauth-token-url" : "--token-env")' both send the Authorization header: give one.")
        }
        return nil
    }

    /// Letters, digits and `_`: what a shell takes as an environment variable's name.
    package static func isVariableName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// An environment variable's name.
    static func variable(_ given: Given, _ option: String) throws(SourceRules.Problem) -> String {
        let name = given.value
        guard isVariableName(name) else {
            throw invalid(name, option, "an environment variable name")
        }
        return name
    }

    /// A query parameter's name.
    static func parameter(_ given: Given, _ option: String) throws(SourceRules.Problem) -> String {
        let name = given.value
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.[]".contains($0)) }) else {
            throw invalid(name, option, "a query parameter name")
        }
        return name
    }

    /// Every option, common ones first, then each kind's own in the registry's order.
    /// (Made once: a server reads a source's settings on every request.)
    public static let all: [Source.Option] = {
        var seen: Set<String> = []
        return SourceKind.allCases.flatMap(\.options).filter { seen.insert($0.name).inserted }
    }()

    private static let byName: [String: SourceOption] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// `text` with each option's flag (`--token-env`) written as the setting an app passes
    /// (`.tokenEnv`): the command line's messages, worded for a program.
    package static func namingSettings(_ text: String) -> String {
        text.replacing(#/--([a-z][a-z-]*[a-z])/#) { match in
            named(String(match.1)).map { "." + $0.setting } ?? String(match.0)
        }
    }

    /// The option named `name` (`ttl`; `--ttl` too), of any kind.
    package static func named(_ name: String) -> SourceOption? {
        byName[name.hasPrefix("--") ? String(name.dropFirst(2)) : name]
    }

    /// The kinds that take this option.
    package var kinds: [SourceKind] { SourceKind.allCases.filter { $0.options.contains(self) } }

    /// The help `sources add` (or `set`) shows: an option some kinds take says which, and when it counts.
    package func help(adding: Bool) -> String {
        let kinds = kinds.count == SourceKind.allCases.count ? "" : kinds.map(\.rawValue).joined(separator: ", ")
        let when = [kinds, qualifier].filter { !$0.isEmpty }.joined(separator: ", ")
        return (when.isEmpty ? "" : when + ": ") + help + (adding ? addingNote : changingNote)
    }
}

extension Source {
    /// The OAuth2 client, made if there is none yet (its other parts follow from their own
    /// options; `commonProblem` refuses a client missing one).
    fileprivate mutating func oauthClient(_ change: (inout OAuthClient) -> Void) {
        var client = oauth ?? OAuthClient(tokenURL: URL(string: "about:blank")!, clientIDEnv: "", clientSecretEnv: "")
        change(&client)
        oauth = client
    }
}
