import FoundationEssentials

/// A generic source's pages: fetched one after another, each naming the next, checked to stay
/// on the source's origin and within its caps.
extension SyncEngine {
    /// Every page of a generic source, in order (each may name the next; its records are
    /// decoded later, and only when the pages differ from the last ones applied). A failing page
    /// fails the whole fetch: nothing of the earlier pages is kept. The source's size cap holds
    /// for all its pages together, as the deadline does.
    func fetchPages(_ request: FetchRequest, source: Source, layout: RecordLayout, options: Options, run: inout Run, deadline: DecodeDeadline)
        throws(UpstreamError) -> (first: FetchResponse, bodies: [Data], hash: String?) {
        var request = request
        var pager = Pager(layout: layout)
        if let start = try pager.firstURL(request.url) { request.url = start }
        if case .header(let name)? = layout.next { request.cursorHeader = name }
        var bodies: [Data] = []
        var hashes = ""
        var first: FetchResponse?
        var visited: Set<String> = [request.url.absoluteString]
        let origin = Origin(request.url)
        var number = 1
        let cap = request.maxBytes
        while true {
            let answer: FetchResponse
            do {
                answer = try fetchAuthorized(request, source: source, options: options, run: &run)
            } catch .tooLarge {
                throw .tooLarge(limit: cap)  // the cap of all pages together
            }
            if number == 1 {
                first = FetchResponse(status: answer.status, body: Data(), etag: answer.etag, lastModified: answer.lastModified)
                if answer.notModified { return (answer, [], nil) }
            } else if answer.notModified {
                throw .badData("HTTP 304 for page \(number), which was asked for without validators")
            }
            hashes += BodyHash.of(answer.body)
            bodies.append(answer.body)
            // What is left of the cap is the next page's cap.
            request.maxBytes -= answer.body.count
            guard let next = try pager.next(after: request.url, answer: answer, page: number, deadline: deadline) else { break }
            // Credentials go to the source's origin only, so its pages must stay there; and none
            // ride in a next URL, as none may in a source's.
            guard next.user == nil && next.password == nil else {
                throw .badData("page \(number) points at a next page with credentials in its URL; refused")
            }
            guard Origin(next) == origin else {
                throw .badData("page \(number) points at a next page on another host (\(Source.redacted(next))); refused, so the token and headers stay with the source's host")
            }
            guard number < layout.maxPages else {
                throw .badData("more than \(layout.maxPages) pages (--max-pages); nothing was written")
            }
            guard visited.insert(next.absoluteString).inserted else {
                throw .badData("page \(number) points back at a page already read (\(Source.redacted(next)))")
            }
            number += 1
            request.url = next
            request.etag = nil
            request.lastModified = nil
        }
        return (first!, bodies, BodyHash.of(Data(hashes.utf8)))
    }
}

/// Where each page after the first is, by the source's paging style (`RecordLayout.NextPage`).
struct Pager {
    let layout: RecordLayout
    /// The records of the pages so far, and of the first page (offset and page numbers).
    private var received = 0
    private var firstCount: Int?

    init(layout: RecordLayout) { self.layout = layout }

    /// The first request's URL where the style sets its parameter from the start (offset 0,
    /// the first page number); nil to fetch the source's URL as it is.
    func firstURL(_ url: URL) throws(UpstreamError) -> URL? {
        guard let parameter = layout.nextParam else { return nil }
        switch layout.next {
        case .offset?: return try Self.url(url, setting: parameter, to: "0")
        case .page?: return try Self.url(url, setting: parameter, to: String(layout.firstPage ?? 1))
        default: return nil
        }
    }

    /// The page after `page` (fetched from `url`), or nil at the end.
    mutating func next(after url: URL, answer: FetchResponse, page: Int, deadline: DecodeDeadline) throws(UpstreamError) -> URL? {
        switch layout.next {
        case nil:
            return nil
        case .link:
            guard let header = answer.link, let target = LinkHeader.next(header) else { return nil }
            guard let next = URL(string: target, relativeTo: url)?.absoluteURL else { throw .badData("an unreadable next link: \(target)") }
            return next
        case .body:
            guard let value = try RecordDecoder.next(answer.body, layout: layout, page: page, deadline: deadline) else { return nil }
            if let parameter = layout.nextParam { return try Self.url(url, setting: parameter, to: value) }
            // A URL or a path; a bare word or number is a cursor, which needs --next-param.
            guard value.contains("/") || value.hasPrefix("?"),
                  let next = URL(string: value, relativeTo: url)?.absoluteURL, next.scheme != nil else {
                throw .badData("the next page is not a URL: \(value) (a cursor needs --next-param NAME)")
            }
            return next
        case .header(let name):
            guard let cursor = answer.cursor?.trimmingWhitespace(), !cursor.isEmpty else { return nil }
            guard let parameter = layout.nextParam else { throw .badData("'--next header:\(name)' needs --next-param") }
            return try Self.url(url, setting: parameter, to: cursor)
        case .offset, .page:
            guard let parameter = layout.nextParam else { throw .badData("'--next \(layout.next!.description)' needs --next-param") }
            // An empty page, or one shorter than the first, is the last.
            let count = try RecordDecoder.decode(answer.body, layout: layout, page: page, deadline: deadline).records.count
            let first = firstCount ?? count
            firstCount = first
            received += count
            guard count > 0, count >= first else { return nil }
            let value = layout.next == .offset ? received : (layout.firstPage ?? 1) + page
            return try Self.url(url, setting: parameter, to: String(value))
        case .lastKey:
            guard let parameter = layout.nextParam else { throw .badData("'--next last-key' needs --next-param") }
            let decoded = try RecordDecoder.decode(answer.body, layout: layout, page: page, deadline: deadline)
            guard let more = decoded.next else {
                throw .badData("no boolean at \(layout.hasMore?.description ?? "$")\(page > 1 ? " on page \(page)" : "")")
            }
            guard more == "true", decoded.records.count > 0 else { return nil }
            return try Self.url(url, setting: parameter, to: decoded.records.key(decoded.records.count - 1))
        }
    }

    /// `url` with the query parameter `name` set to `value` (replacing any value it had). All
    /// but the unreserved characters are escaped: a `+` in a time zone or a base64 cursor must
    /// not reach the server as a space.
    static func url(_ url: URL, setting name: String, to value: String) throws(UpstreamError) -> URL {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw .badData("a page URL that cannot be read: \(Source.redacted(url))")
        }
        let escapedName = name.percentEncoded()
        var items = (parts.percentEncodedQueryItems ?? []).filter { $0.name != escapedName && $0.name.percentDecoded != name }
        items.append(URLQueryItem(name: escapedName, value: value.percentEncoded()))
        parts.percentEncodedQueryItems = items
        guard let next = parts.url else { throw .badData("a cursor that makes no URL: \(value)") }
        return next
    }
}
