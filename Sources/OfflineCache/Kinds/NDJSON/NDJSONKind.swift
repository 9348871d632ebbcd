import FoundationEssentials

/// Newline-delimited JSON (JSON Lines, ndjson): one record per line, each a JSON object, blank
/// lines skipped; keyed by `--key` and kept as records, like a json source's, so views, nested
/// data, search and history read them as they read those.
struct NDJSONKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var summary: String { "(JSON Lines: one record per line: give --key)" }
    var storage: RowStorage { .records }
    /// JSON Lines goes by two names; anything else is still read line by line.
    var accept: String { "application/x-ndjson, application/jsonl, */*;q=0.5" }
    var options: [SourceOption] { [.key] + SourceOption.writing }

    func problem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem? { SourceOption.keyProblem(source) }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        guard let layout else { throw .badData("an ndjson source needs a layout (--key)") }
        return .records(try RecordTables.set(&bodies) { body, page throws(UpstreamError) in
            try RecordDecoder.decode(try Self.array(of: body, deadline: deadline), layout: layout, page: page, deadline: deadline)
        })
    }

    /// The lines as one JSON array of their records, each line first checked to be one JSON
    /// object: a line that is not is bad data, named by its number. A UTF-8 byte-order mark in
    /// front (exports from Windows tools carry one) is passed over, as the csv kind passes it.
    static func array(of body: Data, deadline: DecodeDeadline) throws(UpstreamError) -> Data {
        let result: Result<Data, UpstreamError> = body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var array: [UInt8] = [UInt8(ascii: "[")]
            array.reserveCapacity(bytes.count + 2)
            var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0, number = 0
            while start < bytes.count {
                number += 1
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                start = end + 1
                // Blank lines (and a CR before the newline) are not records.
                guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                var cursor = JSONCursor(line, deadline: deadline.instant)
                do throws(JSONCursor.Failure) {
                    cursor.skipWhitespace()
                    guard cursor.peek() == UInt8(ascii: "{") else {
                        return .failure(.badData("line \(number): a record is a JSON object, one to a line"))
                    }
                    try cursor.skipValue()
                    try cursor.expectEnd()
                } catch {
                    return .failure(error.timedOut ? deadline.error : .badData("line \(number): \(error.message)"))
                }
                if array.count > 1 { array.append(UInt8(ascii: ",")) }
                array.append(contentsOf: line)
            }
            array.append(UInt8(ascii: "]"))
            return .success(Data(array))
        }
        return try result.get()
    }
}
