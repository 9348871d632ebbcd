import FoundationEssentials

/// Reads a CSV body (RFC 4180) into records.
///
/// - Fields are separated by the layout's delimiter (`,` unless the source says otherwise) and
///   rows by CRLF, LF or CR. A field in double quotes may hold the delimiter, line breaks and
///   doubled quotes (`""` is one `"`); a quote inside an unquoted field is kept as it is.
/// - A UTF-8 byte-order mark is skipped; blank lines are skipped.
/// - The first row names the columns. Each later row is a record: an object of column → value,
///   keyed by the `--key` columns. A column whose every value is a JSON number holds numbers
///   (so `cached_NAME` gives numbers); any other column holds strings (`007` stays `"007"`).
/// - Bad data, naming the line, and nothing written: a header with an empty or repeated name, a
///   row with more or fewer fields than the header, a row without its key, two rows with one key
///   and different contents, bytes that are not UTF-8, a quoted field left open.
enum CSVDecoder {
    static let quote = UInt8(ascii: "\""), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")

    static func decode(_ body: Data, layout: RecordLayout, deadline: DecodeDeadline?) throws(UpstreamError) -> RecordPage {
        let rows = try self.rows(body, delimiter: layout.delimiter ?? UInt8(ascii: ","), deadline: deadline)
        guard let header = rows.first else { throw .badData("the CSV body is empty: no header row") }
        var seen: Set<String> = []
        for (column, name) in header.fields.enumerated() {
            guard !name.isEmpty else { throw .badData("line \(header.line): column \(column + 1) of the header has no name") }
            guard seen.insert(name).inserted else { throw .badData("line \(header.line): two columns are named '\(name)'") }
        }
        let keyColumns = try layout.key.map { field throws(UpstreamError) -> Int in
            guard let column = header.fields.firstIndex(of: field.dotted) else {
                throw .badData("the key column '\(field.dotted)' is not in the header (its columns: \(header.fields.prefix(20).joined(separator: ", ")))")
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

        // A column is numeric when every value in it is a JSON number; its values are then
        // written in canonical form (1.50 is 1.5).
        let numbers: [[String]?] = header.fields.indices.map { column in
            var texts: [String] = []
            texts.reserveCapacity(records.count)
            for row in records {
                guard let text = canonicalNumber(row.fields[column]) else { return nil }
                texts.append(text)
            }
            return records.isEmpty ? nil : texts
        }

        var page = RecordPage(records: RecordArena(), positions: [], fields: header.fields, next: nil)
        var lineOfKey: [String: (line: Int, json: Range<Int>)] = [:]
        for (index, row) in records.enumerated() {
            func value(_ column: Int) -> JSONNode {
                numbers[column].map { .number($0[index]) } ?? .string(row.fields[column])
            }
            let record = JSONNode.object(keys: header.fields, values: header.fields.indices.map(value))
            let key = JSONNode.recordKey(keyColumns.map(value))
            let start = page.records.bytes.count
            record.write(into: &page.records.bytes)
            let json = start..<page.records.bytes.count
            if let first = lineOfKey[key] {
                guard page.records.bytes[first.json].elementsEqual(page.records.bytes[json]) else {
                    throw .badData("lines \(first.line) and \(row.line) have the same key (\(key)) and different contents")
                }
                page.records.bytes.removeSubrange(json)  // the same row twice is kept once
                continue
            }
            lineOfKey[key] = (row.line, json)
            page.records.append(key: key, json: json)
            page.positions.append(row.line)
        }
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
                if rows.count & 0xFFF == 0xFFF, let deadline, ContinuousClock.now >= deadline.instant {
                    return .failure(deadline.error)
                }
                let byte = bytes[position]
                if atFieldStart && byte == quote {
                    // A quoted field: up to the quote not doubled.
                    position += 1
                    while true {
                        guard position < bytes.count else {
                            return .failure(.badData("line \(rowLine): a quoted field is not closed before the end of the body"))
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
