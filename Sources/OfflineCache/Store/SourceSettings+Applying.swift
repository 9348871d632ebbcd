import FoundationEssentials

/// Applying checked settings to a source that exists (`cache sources set`, `Cache.setSource`).
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
        if let search { source.searchable = search }
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
