import FoundationEssentials

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
            // An empty page, or one shorter than the first (or than the page size, when the
            // source gives it), is the last.
            let count = try RecordDecoder.decode(answer.body, layout: layout, page: page, deadline: deadline).records.count
            let first = firstCount ?? count
            firstCount = first
            received += count
            guard count > 0, count >= (layout.pageSize ?? first) else { return nil }
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
