import FoundationEssentials

/// One page of a source's rows for a reader that pages (`cache serve`): in the storage's page-key
/// order, after a cursor, with conditions on the view's columns. Every value is a bound
/// parameter; a column is one the view has, or the page is refused.
package struct RowPage: Sendable, Equatable {
    package var limit: Int
    package var staleOnly = false
    /// A past moment in the stored form (`Timestamp`), as `list --as-of` takes it.
    package var asOf: String?
    /// Where the last page ended (`RowCursor`); nil for the first page.
    package var after: String?
    package var filters: [RowFilter] = []

    package init(limit: Int, staleOnly: Bool = false, asOf: String? = nil, after: String? = nil, filters: [RowFilter] = []) {
        self.limit = limit
        self.staleOnly = staleOnly
        self.asOf = asOf
        self.after = after
        self.filters = filters
    }
}

/// Why a page cannot be read as asked: a column the view lacks, an operator or value it cannot
/// take, a cursor that is not one. Said to the caller, who asked for it (a 400).
package struct RowPageError: Error, Equatable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}

/// A condition on one of the view's columns, in PostgREST's form: `price=gte.10`,
/// `name=like.*Pear*`, `id=in.(1,2,3)`, `owner=is.null`, and `not.` before any of them.
package struct RowFilter: Sendable, Equatable {
    package enum Operator: String, CaseIterable, Sendable {
        case eq, neq, gt, gte, lt, lte, like, ilike, `in`, `is`
    }

    package var column: String
    package var op: Operator
    package var value: String
    package var negated = false

    /// The most values one `in` list takes, and the most filters one page takes: each is bound,
    /// and a statement of thousands of parameters costs more than any page is worth.
    package static let largestList = 100
    package static let mostFilters = 20

    /// `text` is what follows `COLUMN=`: `OP.VALUE`.
    package init(column: String, _ text: String) throws(RowPageError) {
        self.column = column
        var rest = Substring(text)
        if rest.hasPrefix("not.") {
            negated = true
            rest = rest.dropFirst(4)
        }
        guard let dot = rest.firstIndex(of: "."), let op = Operator(rawValue: String(rest[..<dot])) else {
            throw RowPageError(message: "'\(column)=\(text)' is not a filter: use COLUMN=OP.VALUE with OP one of \(Operator.allCases.map(\.rawValue).joined(separator: ", ")) (such as \(column)=eq.42)")
        }
        self.op = op
        value = String(rest[rest.index(after: dot)...])
        if op == .is, !["null", "true", "false"].contains(value) {
            throw RowPageError(message: "'\(column)=is.\(value)': 'is' takes null, true or false")
        }
        if op == .in {
            guard value.hasPrefix("("), value.hasSuffix(")"), value.count >= 2 else {
                throw RowPageError(message: "'\(column)=in.\(value.prefix(40))': 'in' takes a list in brackets, such as in.(1,2,3)")
            }
            guard Self.listItems(String(value.dropFirst().dropLast())).count <= Self.largestList else {
                throw RowPageError(message: "'\(column)=in.(…)' lists more than \(Self.largestList) values")
            }
        }
    }

    /// The SQL condition on `column` (the SQL of the column), with its values appended to
    /// `bindings`; parameter `first` is the number of the first one.
    func condition(on column: String, first: Int, bindings: inout [SQLValue]) -> String {
        func parameter(_ value: SQLValue) -> String {
            bindings.append(value)
            return "?\(first + bindings.count - 1)"
        }
        // A view column holds text or numbers (JSON's true and false as 1 and 0): each compared
        // as the value's own kind, so `zip=eq.007` finds the text and `id=eq.7` the number.
        func compared(_ sqlOperator: String, _ text: String) -> String {
            let asText = parameter(.text(text)), asNumber = parameter(Self.number(text))
            return "(typeof(\(column)) = 'text' AND \(column) \(sqlOperator) \(asText)) OR (typeof(\(column)) IN ('integer', 'real') AND \(column) \(sqlOperator) \(asNumber))"
        }
        let condition: String
        switch op {
        case .eq: condition = compared("=", value)
        case .neq: condition = compared("!=", value)
        case .gt: condition = compared(">", value)
        case .gte: condition = compared(">=", value)
        case .lt: condition = compared("<", value)
        case .lte: condition = compared("<=", value)
        // PostgREST's `*` is any run of characters; `like` keeps case (GLOB), `ilike` does not.
        case .like:
            let pattern = value.unicodeScalars.map { $0 == "?" ? "[?]" : $0 == "[" ? "[[]" : String($0) }.joined()
            condition = "\(column) GLOB \(parameter(.text(pattern)))"
        case .ilike:
            let pattern = value.unicodeScalars.map { $0 == "%" ? "\\%" : $0 == "_" ? "\\_" : $0 == "\\" ? "\\\\" : $0 == "*" ? "%" : String($0) }.joined()
            condition = "\(column) LIKE \(parameter(.text(pattern))) ESCAPE '\\'"
        case .in:
            let items = Self.listItems(String(value.dropFirst().dropLast()))
            guard !items.isEmpty else { condition = "0"; break }
            let texts = items.map { parameter(.text($0)) }.joined(separator: ", ")
            let numbers = items.map { parameter(Self.number($0)) }.joined(separator: ", ")
            condition = "(typeof(\(column)) = 'text' AND \(column) IN (\(texts))) OR (typeof(\(column)) IN ('integer', 'real') AND \(column) IN (\(numbers)))"
        case .is:
            condition = value == "null" ? "\(column) IS NULL" : "\(column) IS \(value == "true" ? 1 : 0)"
        }
        return negated ? "NOT coalesce(\(condition), 0)" : condition
    }

    /// A value as a number, where it reads as one (`true` and `false` as 1 and 0); else NULL,
    /// which no number equals.
    static func number(_ text: String) -> SQLValue {
        if text == "true" { return .int(1) }
        if text == "false" { return .int(0) }
        if let integer = Int64(text) { return .int(integer) }
        // Decimal only: Swift's Double also reads hex (`0x10`), which no JSON number is.
        if let double = Double(text), double.isFinite, text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }) {
            return .double(double)
        }
        return .null
    }

    /// `a,b,"c,d"`: the items of an `in` list; double quotes keep a comma in one.
    static func listItems(_ text: String) -> [String] {
        var items: [String] = [], current = "", quoted = false
        for character in text {
            if character == "\"" { quoted.toggle(); continue }
            if character == ",", !quoted { items.append(current); current = ""; continue }
            current.append(character)
        }
        items.append(current)
        return items
    }
}

/// Where a page ended, as an opaque word for a URL: the last row's page key, typed.
package enum RowCursor {
    package static func word(_ value: SQLValue) -> String? {
        switch value {
        case .int(let number): return "i" + String(number)
        case .text(let text): return "t" + Data(text.utf8).base64EncodedString()
            .replacingScalars { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? "" : nil }
        case .double, .null: return nil
        }
    }

    package static func value(_ word: String) throws(RowPageError) -> SQLValue {
        let refused = RowPageError(message: "'after=\(word)' is not a cursor this server gave: follow the 'next' link of the page before")
        if word.hasPrefix("i"), let number = Int64(word.dropFirst()) { return .int(number) }
        guard word.hasPrefix("t") else { throw refused }
        var base64 = String(word.dropFirst()).replacingScalars { $0 == "-" ? "+" : $0 == "_" ? "/" : nil }
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { throw refused }
        return .text(text)
    }
}

extension CacheReader {
    /// Throws what reading `page` would throw for its filters and its cursor, reading no row.
    package func check(_ page: RowPage, of source: Source) throws {
        _ = try conditions(page, of: source)
    }

    /// The page's conditions as SQL and their values from `?3` on (`?3` unused, `?4` the cursor).
    private func conditions(_ page: RowPage, of source: Source) throws -> (conditions: [String], bindings: [SQLValue]) {
        let storage = source.kind.storage.definition
        var bindings: [SQLValue] = [.null, try page.after.map(RowCursor.value) ?? .null]
        var conditions: [String] = []
        guard page.filters.count <= RowFilter.mostFilters else {
            throw RowPageError(message: "more than \(RowFilter.mostFilters) filters in one request")
        }
        for filter in page.filters {
            guard let column = try storage.filterColumn(db, source: source.name, filter.column) else {
                let columns = try viewColumns(of: source)
                throw RowPageError(message: "'\(filter.column)' is not a column of \(source.name)'s rows; its columns: \(columns.joined(separator: ", "))")
            }
            var values: [SQLValue] = []
            conditions.append(filter.condition(on: column, first: 3 + bindings.count, bindings: &values))
            bindings += values
        }
        return (conditions, bindings)
    }

    /// Which of `ids` (rows as `RowChanges` names them: a transaction's or joke's id, a record's
    /// key) `source` still holds: a row that only left a limited reading's window is not removed.
    package func cachedIDs(of source: Source, among ids: Set<String>) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let storage = source.kind.storage.definition
        var selection = RowSelection(source: source.name)
        selection.keyed = true
        var column = storage.pageKey
        if let filtered = try storage.filterColumn(db, source: source.name, storage.pageKey) { column = filtered }
        selection.conditions = ["CAST(\(column) AS TEXT) IN (SELECT value FROM json_each(?5))"]
        var list = ""
        JSONValue.array(ids.sorted().map(JSONValue.string)).write(to: &list)
        var found: Set<String> = []
        var keyColumn: Int?
        try forEachRow(selection, kind: source.kind, limit: nil, asRecords: false, bindings: [.null, .null, .text(list)]) { columns, row in
            if keyColumn == nil { keyColumn = columns.firstIndex(of: storage.pageKey) }
            if let keyColumn, let id = row.text(keyColumn) { found.insert(id) }
        }
        return found
    }

    /// The column a row is found by and pages are ordered by: `key` for records, `id` else.
    package func pageKey(of source: Source) -> String { source.kind.storage.definition.pageKey }

    /// Steps through one page of `source`'s rows (`asRecords` as for `forEachRow`); returns the
    /// cursor of the next page, or nil when this is the last.
    package func forEachRow(of source: Source, page: RowPage, asRecords: Bool,
                           _ body: ([String], Statement) throws -> Void) throws -> String? {
        let storage = source.kind.storage.definition
        var selection = RowSelection(source: source.name, staleOnly: page.staleOnly, asOf: page.asOf)
        selection.keyed = true
        selection.afterKey = page.after != nil
        let (conditions, bindings) = try self.conditions(page, of: source)
        selection.conditions = conditions
        // One row more than the page: whether there is a next page, without counting them all.
        var count = 0
        var last: SQLValue?
        var keyColumn: Int?
        try forEachRow(selection, kind: source.kind, limit: page.limit + 1, asRecords: asRecords, bindings: bindings) { columns, row in
            count += 1
            guard count <= page.limit else { return }
            if keyColumn == nil { keyColumn = columns.firstIndex(of: storage.pageKey) }
            last = keyColumn.map(row.value)
            try body(columns, row)
        }
        guard count > page.limit, let last else { return nil }
        return RowCursor.word(last)
    }
}
