import FoundationEssentials

/// Checking settings: each value on its own (`checked()`), then a new source's kind rules
/// (`newSource`) and the paging options together (`pagingProblem`), with the command line's
/// messages.
extension SourceSettings {
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
        // Paths follow object keys only: an index such as `[0]` is refused, not read as a name.
        for (text, option) in [(rows, "--rows"), (next, "--next"), (hasMore, "--has-more"), (key, "--key"), (cursorField, "--cursor-field")] {
            if let text, JSONPath.indexesAnArray(text) {
                throw invalid(text, option, "a path of object keys (paths do not index arrays: '[0]' would be read as part of a key's name; a key holding brackets is written quoted, such as $['a[0]'])")
            }
        }
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
            // The client secret goes to the token endpoint: RFC 6749 (3.2) requires TLS there.
            // Plain http only to this machine, for tests and local tools.
            if parsed.scheme?.lowercased() == "http", !Self.isLoopback(parsed.host ?? "") {
                throw invalid(text, "--oauth-token-url", "an https URL: over http the client secret would cross the network in clear (RFC 6749 requires TLS for the token endpoint; http is allowed to a loopback address only)")
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
        if let search {
            guard search == "on" || search == "off" else { throw invalid(search, "--search", "on or off") }
            checked.search = search == "on"
        }
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

    /// `localhost`, 127.0.0.0/8 or ::1: an address that never leaves this machine.
    static func isLoopback(_ host: String) -> Bool {
        let host = String(host.lowercased().drop { $0 == "[" }.reversed().drop { $0 == "]" }.reversed())
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
