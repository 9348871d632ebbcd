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
