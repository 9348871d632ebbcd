import FoundationEssentials

/// A generic source's pages: fetched one after another, each naming the next, checked to stay
/// on the source's origin and within its caps.
extension SyncEngine {
    /// Every page of a generic source, in order (each may name the next; its records are
    /// decoded later, and only when the pages differ from the last ones applied). A failing page
    /// fails the whole fetch: nothing of the earlier pages is kept. The source's size cap holds
    /// for all its pages together, as the deadline does.
    func fetchPages(_ request: FetchRequest, layout: RecordLayout, options: Options, run: inout Run, deadline: DecodeDeadline)
        throws(UpstreamError) -> (first: FetchResponse, bodies: [Data], hash: String?) {
        var request = request
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
                answer = try fetchWithRetries(request, options: options, run: &run)
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
            let value = try RecordDecoder.next(answer.body, layout: layout, page: number, deadline: deadline)
            guard let next = try Self.nextPage(after: request.url, answer: answer, nextValue: value, layout: layout) else { break }
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

    /// The next page's URL: from a `Link: <…>; rel="next"` header, a URL in the body, or a
    /// cursor in the body sent as a query parameter of the source's URL. Nil at the end.
    static func nextPage(after url: URL, answer: FetchResponse, nextValue: String?, layout: RecordLayout) throws(UpstreamError) -> URL? {
        switch layout.next {
        case nil:
            return nil
        case .link:
            guard let header = answer.link, let target = LinkHeader.next(header) else { return nil }
            guard let next = URL(string: target, relativeTo: url)?.absoluteURL else { throw .badData("an unreadable next link: \(target)") }
            return next
        case .body:
            guard let value = nextValue else { return nil }
            if let parameter = layout.nextParam {
                guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
                var items = (parts.queryItems ?? []).filter { $0.name != parameter }
                items.append(URLQueryItem(name: parameter, value: value))
                parts.queryItems = items
                guard let next = parts.url else { throw .badData("a cursor that makes no URL: \(value)") }
                return next
            }
            // A URL or a path; a bare word or number is a cursor, which needs --next-param.
            guard value.contains("/") || value.hasPrefix("?"),
                  let next = URL(string: value, relativeTo: url)?.absoluteURL, next.scheme != nil else {
                throw .badData("the next page is not a URL: \(value) (a cursor needs --next-param NAME)")
            }
            return next
        }
    }
}
