import FoundationEssentials

/// A json source's own options (see `SourceOption`): where its records are, how it pages, and how
/// it syncs incrementally; with the checks that hold them together.
extension SourceOption {
    /// `--rows`: Where the records are: $ (the response), $.results, $.data.items (default: $).
    public static let rows = Source.Option(
        "rows", "path", help: "where the records are: $ (the response), $.results, $.data.items (default: $).",
        effects: [.abortsSync, .unconfirms], listed: { [("rows", .string($0.layout?.rows.description ?? "$"))] },
        text: { layout in layout.layout.flatMap { $0.rows.keys.isEmpty ? nil : [$0.rows.description] } },
        show: { $0.layout?.rows.description ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        let text = given.value
        try refuseIndexes(text, "--rows")
        guard text.hasPrefix("$"), let path = JSONPath(text) else { throw invalid(text, "--rows", "a path such as $, $.results or $.data.items") }
        source.layout?.rows = path
    }

    /// `--next`: How to find the next page: link (Link: <…>; rel="next" headers), a path in the body such as $.next or $['@odata.nextLink'] (a URL, or a cursor with --next-param), header:NAME (a cursor in that response header), offset, page, or last-key (with --has-more).
    public static let next = Source.Option(
        "next", "style",
        help: "how to find the next page: link (Link: <…>; rel=\"next\" headers), a path in the body such as $.next or $['@odata.nextLink'] (a URL, or a cursor with --next-param), header:NAME (a cursor in that response header), offset, page, or last-key (with --has-more).",
        listed: { [("next", .optional($0.layout?.next?.description))] },
        text: { $0.layout?.next.map { [$0.description] } }, show: { $0.layout?.next?.description ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let text = given.value
        try refuseIndexes(text, "--next")
        // A body path is written with its `$`: a bare word is a mistake, not a field.
        guard let next = RecordLayout.NextPage(text), text.hasPrefix("$") || !next.isBodyPath else {
            throw invalid(text, "--next", "link, offset, page, last-key, header:NAME, or a path such as $.next")
        }
        source.layout?.next = next
    }

    /// `--next-param`: The query parameter the cursor, offset, page number or last key is sent as.
    public static let nextParam = Source.Option(
        "next-param", "name", help: "the query parameter the cursor, offset, page number or last key is sent as.",
        listed: { [("next_param", .optional($0.layout?.nextParam))] },
        text: { $0.layout?.nextParam.map { [$0] } }, show: { $0.layout?.nextParam ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        source.layout?.nextParam = try parameter(given, "--next-param")
    }

    /// `--first-page`: The first page's number (default: 1).
    public static let firstPage = Source.Option(
        "first-page", "n", help: "the first page's number (default: 1).", qualifier: "with --next page",
        listed: { [("first_page", .optional($0.layout?.firstPage))] },
        text: { $0.layout?.firstPage.map { [String($0)] } }, show: { $0.layout?.firstPage.map(String.init) ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        guard let number = Int(given.value), (0...1_000_000).contains(number) else {
            throw invalid(given.value, "--first-page", "a page number such as 0 or 1")
        }
        source.layout?.firstPage = number
    }

    /// `--page-size`: The records a full page holds, as the URL asks for them; a page with fewer is the last (default: a page shorter than the first).
    public static let pageSize = Source.Option(
        "page-size", "n", help: "the records a full page holds, as the URL asks for them; a page with fewer is the last (default: a page shorter than the first).",
        qualifier: "with --next offset or page",
        listed: { [("page_size", .optional($0.layout?.pageSize))] },
        text: { $0.layout?.pageSize.map { [String($0)] } }, show: { $0.layout?.pageSize.map(String.init) ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        guard let number = Int(given.value), (1...1_000_000).contains(number) else {
            throw invalid(given.value, "--page-size", "a number of records such as 100")
        }
        source.layout?.pageSize = number
    }

    /// `--has-more`: The boolean that says more pages follow, such as $.has_more.
    public static let hasMore = Source.Option(
        "has-more", "path", help: "the boolean that says more pages follow, such as $.has_more.", qualifier: "with --next last-key",
        listed: { [("has_more", .optional($0.layout?.hasMore?.description))] },
        text: { $0.layout?.hasMore.map { [$0.description] } }, show: { $0.layout?.hasMore?.description ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        let text = given.value
        try refuseIndexes(text, "--has-more")
        guard text.hasPrefix("$"), let path = JSONPath(text), !path.keys.isEmpty else { throw invalid(text, "--has-more", "a path such as $.has_more") }
        source.layout?.hasMore = path
    }

    /// `--max-pages`: Fail the sync rather than read more pages than this (default: 100).
    public static let maxPages = Source.Option(
        "max-pages", "n", help: "fail the sync rather than read more pages than this (default: 100).",
        listed: { [("max_pages", .int($0.layout?.maxPages ?? RecordLayout.defaultMaxPages))] },
        text: { layout in layout.layout.flatMap { $0.maxPages == RecordLayout.defaultMaxPages ? nil : [String($0.maxPages)] } },
        show: { $0.layout.map { String($0.maxPages) } ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        guard let count = Int(given.value), (1...100_000).contains(count) else {
            throw invalid(given.value, "--max-pages", "a number of pages from 1")
        }
        source.layout?.maxPages = count
    }

    /// `--since-param`: Send the watermark as this query parameter, such as updated_since (with --cursor-field).
    public static let sinceParam = Source.Option(
        "since-param", "name", help: "send the watermark as this query parameter, such as updated_since (with --cursor-field).",
        qualifier: "incremental", effects: [.abortsSync, .resetsWatermark],
        listed: { [("since_param", .optional($0.layout?.incremental?.sinceParam))] },
        text: { $0.layout?.incremental.map { [$0.sinceParam] } }, show: { $0.layout?.incremental?.sinceParam ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let name = try parameter(given, "--since-param")
        source.incremental { $0.sinceParam = name }
    }

    /// `--cursor-field`: The field whose largest value is the watermark, such as updated_at.
    public static let cursorField = Source.Option(
        "cursor-field", "field", help: "the field whose largest value is the watermark, such as updated_at.",
        qualifier: "incremental", effects: [.abortsSync, .resetsWatermark],
        listed: { [("cursor_field", .optional($0.layout?.incremental?.cursorField.dotted))] },
        text: { $0.layout?.incremental.map { [$0.cursorField.dotted] } }, show: { $0.layout?.incremental?.cursorField.dotted ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let text = given.value
        try refuseIndexes(text, "--cursor-field")
        guard let path = JSONPath(text), !path.keys.isEmpty, !path.keys.contains(where: { $0.contains("\"") || $0.contains("\\") }) else {
            throw invalid(text, "--cursor-field", "a field name such as updated_at, or meta.updated")
        }
        source.incremental { $0.cursorField = path }
    }

    /// `--lag`: Ask from this long before the watermark (default: 0).
    public static let lag = Source.Option(
        "lag", "duration", help: "ask from this long before the watermark (default: 0).", qualifier: "incremental",
        listed: { [("lag_s", .optional($0.layout?.incremental?.lagSeconds))] },
        text: { $0.layout?.incremental.flatMap { $0.lagSeconds == 0 ? nil : [DurationText.format($0.lagSeconds)] } },
        show: { $0.layout?.incremental.map { $0.lagSeconds == 0 ? "0" : DurationText.format($0.lagSeconds) } ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        // No lag is a lag of 0.
        let seconds = given.value == "0" ? 0 : try duration(given, "--lag")
        source.incremental { $0.lagSeconds = seconds }
    }

    /// `--since-format`: Write the watermark in the request in this format (UTC): %Y-%m-%d, %Y-%m-%dT%H:%M:%SZ, or %s, %ms for seconds or milliseconds since 1970 (default: as the records have it).
    public static let sinceFormat = Source.Option(
        "since-format", "format",
        help: "write the watermark in the request in this format (UTC): %Y-%m-%d, %Y-%m-%dT%H:%M:%SZ, or %s, %ms for seconds or milliseconds since 1970 (default: as the records have it).",
        qualifier: "incremental", effects: [.abortsSync],
        listed: { [("since_format", .optional($0.layout?.incremental?.sinceFormat?.pattern))] },
        text: { $0.layout?.incremental?.sinceFormat.map { [$0.pattern] } }, show: { $0.layout?.incremental?.sinceFormat?.pattern ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        guard let format = TimeFormat(given.value) else {
            throw invalid(given.value, "--since-format", "a format of %Y, %m, %d, %H, %M, %S, %f, %s, %z, %Z and text, such as %Y-%m-%d, or one of %s, %ms, %s_as_float, %epoch_microseconds")
        }
        source.incremental { $0.sinceFormat = format }
    }

    /// `--full-every`: Sync in full this often, removing what upstream no longer has (default: 1d).
    public static let fullEvery = Source.Option(
        "full-every", "duration", help: "sync in full this often, removing what upstream no longer has (default: 1d).",
        qualifier: "incremental", listed: { [("full_every_s", .optional($0.layout?.incremental?.fullEverySeconds))] },
        text: { $0.layout?.incremental.flatMap {
            $0.fullEverySeconds == RecordLayout.Incremental.defaultFullEvery ? nil : [DurationText.format($0.fullEverySeconds)] } },
        show: { $0.layout?.incremental.map { DurationText.format($0.fullEverySeconds) } ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        let seconds = try duration(given, "--full-every")
        source.incremental { $0.fullEverySeconds = seconds }
    }

    /// `--no-incremental`: Sync in full each time again (the watermark is forgotten).
    public static let noIncremental = Source.Option(
        clearing: "no-incremental", help: "sync in full each time again (the watermark is forgotten).",
        clears: ["since-param", "cursor-field", "lag", "since-format", "full-every"])

    /// A json source's own options, in the order help shows them.
    static let json: [SourceOption] = [
        rows, key, next, nextParam, firstPage, pageSize, hasMore, maxPages, sinceParam, cursorField, lag, sinceFormat, fullEvery, noIncremental,
    ] + writing

    /// Why a json source's options do not go together, or nil.
    static func jsonProblem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem? {
        guard let layout = source.layout else { return nil }
        if let problem = keyProblem(source) ?? pagingProblem(layout) { return problem }
        if layout.incremental != nil, settings[sinceParam] == nil || settings[cursorField] == nil {
            return SourceRules.Problem(message: "Incremental syncs need both '--since-param <name>' and '--cursor-field <field>'.")
        }
        return nil
    }

    /// Why a layout's paging options do not go together, or nil.
    static func pagingProblem(_ layout: RecordLayout) -> SourceRules.Problem? {
        let problem = { (text: String) in SourceRules.Problem(message: text) }
        if layout.nextParam != nil, layout.next == nil || layout.next == .link {
            return problem("'--next-param' needs '--next <style>' other than link: a path, header:NAME, offset, page or last-key.")
        }
        if let next = layout.next, next.needsParam, layout.nextParam == nil {
            return problem("'--next \(next.description)' needs '--next-param <name>': the query parameter it sets.")
        }
        if layout.firstPage != nil, layout.next != .page { return problem("'--first-page' is for '--next page'.") }
        if layout.pageSize != nil, layout.next != .page && layout.next != .offset { return problem("'--page-size' is for '--next offset' and '--next page'.") }
        if layout.next == .lastKey, layout.hasMore == nil {
            return problem("'--next last-key' needs '--has-more <path>': the boolean that says more pages follow.")
        }
        if layout.hasMore != nil, layout.next != .lastKey { return problem("'--has-more' is for '--next last-key'.") }
        return nil
    }

    /// A change of `--next` takes the options of the old style with it, unless they are given
    /// again: `--first-page` goes with page, `--has-more` with last-key, and `--next-param`
    /// means nothing to a link or a body URL (a body cursor takes one).
    static func jsonChange(_ settings: inout SourceSettings, given: SourceSettings, before: Source) {
        guard let text = given[next]?.values.last, let style = RecordLayout.NextPage(text) else { return }
        if style != .page, given[firstPage] == nil { settings[firstPage] = nil }
        if style != .page && style != .offset, given[pageSize] == nil { settings[pageSize] = nil }
        if style != .lastKey, given[hasMore] == nil { settings[hasMore] = nil }
        if !style.needsParam, given[nextParam] == nil, style == .link || before.layout?.next?.needsParam == true {
            settings[nextParam] = nil
        }
    }
}

extension Source {
    /// The incremental settings, made if there are none yet (their names follow from their own
    /// options; `jsonProblem` refuses settings missing one).
    fileprivate mutating func incremental(_ change: (inout RecordLayout.Incremental) -> Void) {
        var incremental = layout?.incremental ?? RecordLayout.Incremental(sinceParam: "", cursorField: JSONPath())
        change(&incremental)
        layout?.incremental = incremental
    }
}
