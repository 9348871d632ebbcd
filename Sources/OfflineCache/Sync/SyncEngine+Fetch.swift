import FoundationEssentials

/// One source's requests: built with its headers and token, sent with retries, and with an
/// OAuth2 client's bearer token when it has one.
extension SyncEngine {
    /// `fetchWithRetries`, with the source's OAuth2 bearer token when it has a client: a 401
    /// gets a new token and the request once more.
    func fetchAuthorized(_ request: FetchRequest, source: Source, options: Options, run: inout Run) throws(UpstreamError) -> FetchResponse {
        guard let client = source.oauth else { return try fetchWithRetries(request, options: options, run: &run) }
        var request = request
        let token = { (refused: String?) throws(UpstreamError) -> String in
            try OAuthTokens.token(for: client, environment: environment, fetcher: fetcher, deadline: request.deadline,
                                  timeout: options.timeout, caCert: source.caCert, replacing: refused)
        }
        let first = try token(nil)
        request.headers.append(Source.Header(name: "Authorization", value: "Bearer " + first))
        do {
            return try fetchWithRetries(request, options: options, run: &run)
        } catch {
            guard case .httpStatus(401, _, _) = error else { throw error }
            request.headers.removeLast()
            request.headers.append(Source.Header(name: "Authorization", value: "Bearer " + (try token(first))))
            return try fetchWithRetries(request, options: options, run: &run)
        }
    }

    /// Asks again for what can succeed later, with jittered backoff or the server's
    /// Retry-After; gives up at once on anything else, and when the wait would pass the deadline.
    func fetchWithRetries(_ request: FetchRequest, options: Options, run: inout Run) throws(UpstreamError) -> FetchResponse {
        var attempt = 0
        while true {
            attempt += 1
            run.report.attempts = attempt
            do {
                return try fetcher.fetch(request)
            } catch {
                guard error.isRetryable, attempt < options.maxAttempts else { throw error }
                let wait = error.retryAfter ?? options.retryBackoff.delay(afterFailures: attempt)
                // A server that asks for a long pause gets it from cron's backoff, not from us.
                guard wait <= options.longestRetryWait,
                      ContinuousClock.now + .milliseconds(Int64(wait * 1000)) < request.deadline else { throw error }
                if error.retryAfter != nil { run.report.retryAfterWait += wait }
                sleep(wait)
            }
        }
    }

    /// The request for `source`, with its extra headers and, if it names one, its bearer token.
    func fetchRequest(for source: Source, timeout: Double,
                      deadline: ContinuousClock.Instant? = nil) throws(UpstreamError) -> FetchRequest {
        try Self.fetchRequest(for: source, environment: environment, timeout: timeout, deadline: deadline)
    }

    /// The same, with the token and `${VAR}`s read from `environment` (a push's requests too).
    static func fetchRequest(for source: Source, environment: [String: String], timeout: Double,
                             deadline: ContinuousClock.Instant? = nil) throws(UpstreamError) -> FetchRequest {
        // Each `${VAR}` filled in now, before any request: the database holds only the names.
        func filled(_ text: String) throws(UpstreamError) -> String {
            switch TemplateText.expanded(text, environment) {
            case .success(let text): return text
            case .failure(let unfilled): throw .unfilledVariable(variable: unfilled.variable, control: unfilled != .unset(unfilled.variable))
            }
        }
        var url = source.url
        if !TemplateText.variables(in: url.absoluteString).isEmpty {
            guard let expanded = URL(string: try filled(url.absoluteString)), expanded.host != nil || expanded.scheme == "file" else {
                throw .badURL(Source.redacted(url))
            }
            url = expanded
        }
        var headers: [Source.Header] = []
        for header in source.headers { headers.append(Source.Header(name: header.name, value: try filled(header.value))) }
        if let variable = source.missingToken(in: environment) { throw .missingToken(variable: variable) }
        if let variable = source.tokenEnv, let token = environment[variable] {
            guard !token.unicodeScalars.contains(where: Source.Header.isControl) else { throw .badToken(variable: variable) }
            headers.append(Source.Header(name: "Authorization", value: "Bearer \(token)"))
        }
        if let basic = source.basic, let user = environment[basic.userEnv] {
            let password = basic.passwordEnv.flatMap { environment[$0] } ?? ""
            // RFC 7617: the user name may not hold a colon, and neither part a control character.
            for (variable, value) in [(basic.userEnv, user), (basic.passwordEnv ?? "", password)]
            where value.unicodeScalars.contains(where: Source.Header.isControl) || (variable == basic.userEnv && value.contains(":")) {
                throw .badToken(variable: variable)
            }
            headers.append(Source.Header(name: "Authorization", value: "Basic " + Data((user + ":" + password).utf8).base64EncodedString()))
        }
        var request = FetchRequest(url: url, headers: headers, timeout: timeout, deadline: deadline,
                                   maxBytes: min(source.maxBytes ?? FetchRequest.defaultMaxBytes, FetchRequest.largestMaxBytes), caCert: source.caCert)
        // A parameter the environment fills may hold a key (`?appid=${WEATHER_KEY}`): hidden in messages.
        request.secretParameters = Set((URLComponents(url: source.url, resolvingAgainstBaseURL: false)?.queryItems ?? [])
            .filter { ($0.value ?? "").contains("${") }.map(\.name))
        request.accept = source.kind.accept
        return request
    }
}
