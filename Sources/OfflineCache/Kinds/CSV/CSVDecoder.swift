import FoundationEssentials

/// Reads a CSV body (RFC 4180) into records.
///
/// - Fields are separated by the layout's delimiter (`,` unless the source says otherwise) and
///   rows by CRLF, LF or CR. A field in double quotes may hold the delimiter, line breaks and
///   doubled quotes (`""` is one `"`); a quote inside an unquoted field is kept as it is.
/// - A UTF-8 byte-order mark is skipped; blank lines are skipped.
/// - The first row names the columns. Each later row is a record: an object of column → value,
///   keyed by the `--key` columns' text (`1.10` is not `1.1`). A value that is a JSON number
///   is kept as a number (so a column of numbers is numbers in `cached_NAME`); any other value
///   as a string (`007` stays `"007"`, an empty field `""`). Each row is read on its own: a
///   record never changes because another row did.
/// - Bad data, naming the line, and nothing written: a header with an empty or repeated name, a
///   row with more or fewer fields than the header, a row without its key, two rows with one key
///   and different contents, bytes that are not UTF-8, a quoted field left open.
enum CSVDecoder {
    static let quote = UInt8(ascii: "\""), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")

    /// A header read as one column that another delimiter would split (`id;name;price`): what
    /// to add to the source.
    static func delimiterHint(_ header: [String], current: UInt8) -> String {
        guard header.count == 1, let only = header.first else { return "" }
        for (byte, written) in [(UInt8(ascii: ";"), "';'"), (UInt8(ascii: "\t"), "tab"), (UInt8(ascii: "|"), "'|'"), (UInt8(ascii: ","), "','")]
        where byte != current && only.utf8.contains(byte) {
            return "; the header looks separated by \(written): 'cache sources set NAME --delimiter \(written)'"
        }
        return ""
    }

    static func decode(_ body: Data, layout: RecordLayout, deadline: DecodeDeadline?) throws(UpstreamError) -> RecordPage {
        let rows = try self.rows(body, delimiter: layout.delimiter ?? UInt8(ascii: ","), deadline: deadline)
        guard let header = rows.first else { throw .badData("the CSV body is empty: no header row") }
        // Names and keys by their bytes, as a json source's are (see ExactText).
        var seen: Set<ExactText> = []
        for (column, name) in header.fields.enumerated() {
            guard !name.isEmpty else { throw .badData("line \(header.line): column \(column + 1) of the header has no name") }
            guard seen.insert(ExactText(name)).inserted else { throw .badData("line \(header.line): two columns are named '\(name)'") }
        }
        let keyColumns = try layout.key.map { field throws(UpstreamError) -> Int in
            guard let column = header.fields.firstIndex(where: { $0.utf8.elementsEqual(field.dotted.utf8) }) else {
                throw .badData("the key column '\(field.dotted)' is not in the header (its columns: \(header.fields.prefix(20).joined(separator: ", ")))"
                    + delimiterHint(header.fields, current: layout.delimiter ?? UInt8(ascii: ",")))
            }
            return column
        }
        let records = rows.dropFirst()
        for row in records where row.fields.count != header.fields.count {
            throw .badData("line \(row.line): \(row.fields.count) field\(row.fields.count == 1 ? "" : "s") where the header has \(header.fields.count)")
        }
        for row in records {
            if let column = keyColumns.first(where: { row.fields[$0].isEmpty }) {
                throw .badData("line \(row.line): no value in the key column '\(header.fields[column])'")
            }
        }

        var page = RecordPage(records: RecordArena(), positions: nil, fields: header.fields, next: nil)
        var lines: [Int] = []  // each record's line, for messages
        var lineOfKey: [ExactText: (line: Int, json: Range<Int>)] = [:]
        for (index, row) in records.enumerated() {
            if index & 0xFFF == 0xFFF, let deadline, ContinuousClock.now >= deadline.instant { throw deadline.error }
            let values = row.fields.map { text in canonicalNumber(text).map(JSONNode.number) ?? .string(text) }
            let record = JSONNode.object(keys: header.fields, values: values)
            // The key from the fields' text, whatever else the row holds.
            let key = JSONNode.recordKey(keyColumns.map { .string(row.fields[$0]) })
            let start = page.records.bytes.count
            record.write(into: &page.records.bytes)
            let json = start..<page.records.bytes.count
            if let first = lineOfKey[ExactText(key)] {
                guard page.records.bytes[first.json].elementsEqual(page.records.bytes[json]) else {
                    throw .badData("lines \(first.line) and \(row.line) have the same key (\(key)) and different contents")
                }
                page.records.bytes.removeSubrange(json)  // the same row twice is kept once, and counted
                page.repeats += 1
                continue
            }
            lineOfKey[ExactText(key)] = (row.line, json)
            page.records.append(key: key, json: json)
            lines.append(row.line)
        }
        page.positions = lines
        return page
    }

    /// A row's fields and the line it starts on (a quoted field may span lines).
    struct Row {
        var line: Int
        var fields: [String]
    }

    /// Splits the body into rows of fields, checking each field is UTF-8.
    static func rows(_ body: Data, delimiter: UInt8, deadline: DecodeDeadline?) throws(UpstreamError) -> [Row] {
        let result: Result<[Row], UpstreamError> = body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var rows: [Row] = []
            var fields: [String] = []
            var field: [UInt8] = []
            var line = 1, rowLine = 1
            var position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            var atFieldStart = true
            // The deadline is looked at every 64 KiB read.
            var nextCheck = position + (1 << 16)
            func pastDeadline() -> Bool {
                guard position >= nextCheck, let deadline else { return false }
                nextCheck = position + (1 << 16)
                return ContinuousClock.now >= deadline.instant
            }
            func endField() -> UpstreamError? {
                guard let text = String(validating: field, as: UTF8.self) else {
                    return .badData("line \(rowLine): field \(fields.count + 1) is not valid UTF-8")
                }
                fields.append(text)
                field.removeAll(keepingCapacity: true)
                atFieldStart = true
                return nil
            }
            func endRow() {
                // A blank line is no row.
                if !(fields.count == 1 && fields[0].isEmpty) { rows.append(Row(line: rowLine, fields: fields)) }
                fields.removeAll(keepingCapacity: true)
            }
            while position < bytes.count {
                if pastDeadline() { return .failure(deadline!.error) }
                let byte = bytes[position]
                if atFieldStart && byte == quote {
                    // A quoted field: up to the quote not doubled.
                    let opened = line
                    position += 1
                    while true {
                        if pastDeadline() { return .failure(deadline!.error) }
                        guard position < bytes.count else {
                            return .failure(.badData("line \(opened): a quoted field is not closed before the end of the body"))
                        }
                        let next = bytes[position]
                        if next == quote {
                            if position + 1 < bytes.count && bytes[position + 1] == quote {
                                field.append(quote)
                                position += 2
                                continue
                            }
                            position += 1
                            break
                        }
                        if next == lf || (next == cr && !(position + 1 < bytes.count && bytes[position + 1] == lf)) { line += 1 }
                        field.append(next)
                        position += 1
                    }
                    if position < bytes.count, ![delimiter, cr, lf].contains(bytes[position]) {
                        return .failure(.badData("line \(line): text after the closing quote of field \(fields.count + 1)"))
                    }
                    atFieldStart = false
                    continue
                }
                if byte == delimiter {
                    if let error = endField() { return .failure(error) }
                    position += 1
                    continue
                }
                if byte == cr || byte == lf {
                    if let error = endField() { return .failure(error) }
                    endRow()
                    position += (byte == cr && position + 1 < bytes.count && bytes[position + 1] == lf) ? 2 : 1
                    line += 1
                    rowLine = line
                    continue
                }
                field.append(byte)
                atFieldStart = false
                position += 1
            }
            // The last row, when the body does not end with a line break.
            if !fields.isEmpty || !field.isEmpty || !atFieldStart {
                if let error = endField() { return .failure(error) }
                endRow()
            }
            return .success(rows)
        }
        return try result.get()
    }

    /// The canonical text of a value that is a JSON number (`12`, `-0.5`, `1e3`), else nil.
    static func canonicalNumber(_ text: String) -> String? {
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first) else { return nil }
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer -> String? in
            var cursor = JSONCursor(UnsafeBufferPointer(buffer))
            guard let number = try? RecordDecoder.numberText(&cursor), cursor.position == buffer.count else { return nil }
            return number
        }
    }
}
