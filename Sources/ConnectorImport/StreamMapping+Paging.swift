import OfflineCache

extension StreamMapping {
    /// `DefaultPaginator` → `next` and its parameters.
    mutating func page(_ paginator: YAMLNode?, _ query: inout [(String, String)], _ options: inout [(String, JSONValue)],
                       _ interpolation: inout Interpolation) throws(Refusal) {
        guard let paginator, !paginator.isNull, paginator["type"]?.string != "NoPagination" else { return }
        interpolation.parameters = paginator["$parameters"] ?? interpolation.parameters
        guard paginator["type"]?.string ?? "DefaultPaginator" == "DefaultPaginator" else {
            throw Refusal(component: paginator["type"]?.string ?? "paginator", reason: "only DefaultPaginator is read")
        }
        let strategy = paginator["pagination_strategy"] ?? .null
        let tokenOption = paginator["page_token_option"]
        let tokenPlace = tokenOption?["type"]?.string == "RequestPath" ? "path" : (tokenOption?["inject_into"]?.string ?? "request_parameter")
        guard tokenPlace == "path" || tokenPlace == "request_parameter" else {
            throw Refusal(component: "DefaultPaginator", reason: "a page token sent in the \(tokenPlace == "body_json" || tokenPlace == "body_data" ? "request body (paging through a POST body)" : tokenPlace) is not read")
        }
        let tokenField = tokenOption?["field_name"]?.string
        // A page size may be a setting: read as its default, which the URL then asks for.
        var size: String?
        if let text = strategy["page_size"]?.string { size = try interpolation.literal(text, "\(strategy["type"]?.string ?? "pagination_strategy").page_size") }
        if let size, let sizeOption = paginator["page_size_option"] {
            guard sizeOption["inject_into"]?.string ?? "request_parameter" == "request_parameter", let field = sizeOption["field_name"]?.string else {
                throw Refusal(component: "DefaultPaginator", reason: "page_size_option: only a request parameter is read")
            }
            query.append((field, size))
        }
        switch strategy["type"]?.string ?? "" {
        case "CursorPagination":
            let value = (strategy["cursor_value"]?.string ?? "").trimmingSpaces()
            guard let expression = Interpolation.expression(value) else {
                throw Refusal(component: "CursorPagination", reason: "cursor_value '\(value)' is not one {{ … }} expression")
            }
            if let path = Interpolation.path(expression, in: "response") {
                options.append(("next", .string(path)))
                if tokenPlace == "request_parameter" {
                    guard let tokenField else { throw Refusal(component: "DefaultPaginator", reason: "page_token_option names no field_name") }
                    options.append(("next-param", .string(tokenField)))
                }
            } else if ["headers['link']['next']['url']", "headers.link.next.url", "headers[\"link\"][\"next\"][\"url\"]"].contains(expression.replacing(" ", with: "")) {
                options.append(("next", .string("link")))
            } else if let header = Interpolation.parts(expression, in: "headers"), header.count == 1 {
                // A cursor in a response header, sent as a request parameter.
                guard tokenPlace == "request_parameter", let tokenField else {
                    throw Refusal(component: "CursorPagination", reason: "a cursor from the \(header[0]) header must go in a request parameter (page_token_option.field_name)")
                }
                options += [("next", .string("header:\(header[0])")), ("next-param", .string(tokenField))]
            } else if let field = Interpolation.parts(expression, in: "last_record"), field.count == 1 {
                // The last record's key while a boolean says more follow (Stripe's style).
                guard field[0] == (try? primaryKey()) else {
                    throw Refusal(component: "CursorPagination", reason: "the cursor is the last record's \(field[0]), not its primary key, which cache sends")
                }
                let stop = Interpolation.expression(strategy["stop_condition"]?.string?.trimmingSpaces() ?? "") ?? ""
                guard let more = Self.moreFlag(stop) else {
                    throw Refusal(component: "CursorPagination", reason: "a last_record cursor needs a stop_condition on a boolean of the response, such as {{ not response.has_more }}")
                }
                guard tokenPlace == "request_parameter", let tokenField else {
                    throw Refusal(component: "CursorPagination", reason: "the last record's key must go in a request parameter (page_token_option.field_name)")
                }
                options += [("next", .string("last-key")), ("next-param", .string(tokenField)), ("has-more", .string(more))]
            } else {
                throw Refusal(component: "CursorPagination", reason: "cursor_value {{ \(expression) }}: cache reads a next URL or cursor from the body, or the Link header")
            }
        case "OffsetIncrement", "PageIncrement":
            let offset = strategy["type"]?.string == "OffsetIncrement"
            guard tokenPlace == "request_parameter", let tokenField else {
                throw Refusal(component: strategy["type"]?.string ?? "", reason: "the offset or page number must go in a request parameter (page_token_option.field_name)")
            }
            options.append(("next", .string(offset ? "offset" : "page")))
            options.append(("next-param", .string(tokenField)))
            if let size {
                guard let number = Int(size), number > 0 else { throw Refusal(component: strategy["type"]?.string ?? "", reason: "page_size '\(size)' is not a number of records") }
                options.append(("page-size", .int(number)))
            }
            if !offset {
                // The CDK counts pages from 0 unless told otherwise.
                options.append(("first-page", .int(Int(strategy["start_from_page"]?.string ?? "0") ?? 0)))
            }
        case let other:
            throw Refusal(component: other.isEmpty ? "DefaultPaginator" : other, reason: "this pagination strategy is not read")
        }
    }

    /// The boolean a stop condition reads (`not response.has_more`, `response.has_more ==
    /// false`, `response['has_more'] is false`), as a path: more pages while it is true.
    static func moreFlag(_ condition: String) -> String? {
        var text = condition.replacing(" ", with: "")
        if text.hasPrefix("not") { text = String(text.dropFirst(3)) }
        else if text.hasSuffix("==false") { text = String(text.dropLast(7)) }
        else if text.hasSuffix("isfalse") { text = String(text.dropLast(7)) }
        else { return nil }
        return Interpolation.path(text, in: "response")
    }
}
