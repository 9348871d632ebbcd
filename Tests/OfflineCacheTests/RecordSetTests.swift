import Foundation
import Testing
@testable import OfflineCache

/// A sync's records from all its pages, as `RecordTables.set` gathers them: in key order, each
/// key once, a record that came twice the same kept once, and two that differ refused by their
/// places in the responses.
@Suite struct RecordSetTests {
    func set(_ pages: [String], key: String = "id") throws(UpstreamError) -> RecordSet {
        var bodies = pages.map { Data($0.utf8) }
        let layout = RecordLayout(key: [JSONPath([key])])
        return try RecordTables.set(&bodies) { body, number throws(UpstreamError) in
            try RecordDecoder.decode(body, layout: layout, page: number, release: .pages)
        }
    }

    func failure(_ pages: [String]) -> String? {
        do {
            _ = try set(pages)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func recordsComeInKeyOrderByTheirBytesWithRepeatsKeptOnce() throws {
        let records = try set([
            #"[{"id": "b", "n": 1}, {"id": "é"}, {"id": "a"}]"#,
            #"[{"n": 1, "id": "b"}, {"id": "B"}, {"id": "a"}]"#,
        ])
        // As SQLite orders text: by bytes, so "B" before "a" and "é" (0xC3 0xA9) last.
        #expect((0..<records.records.count).map { records.records.key($0) } == ["B", "a", "b", "é"])
        #expect(records.records.json(2) == #"{"id":"b","n":1}"#)
        #expect(records.repeats == 2)
    }

    @Test func twoRecordsOfOneKeyThatDifferAreNamedByTheirPlaces() {
        #expect(failure([#"[{"id": 1, "a": 1}, {"id": 2}]"#, #"[{"id": 5}, {"id": 1, "a": 2}]"#])?
                    .contains("records 0 on page 1 and 1 on page 2 have the same key (1) and different contents") == true)
        // The first of the key's records is the one named beside the record that differs from it,
        // after a repeat of it, and whatever the order of the keys between them.
        #expect(failure([#"[{"id": 9}, {"id": 1, "a": 1}, {"id": 0}, {"id": 1, "a": 1}, {"id": 4}, {"id": 1, "a": 2}]"#])?
                    .contains("records 1 and 5 have the same key (1) and different contents") == true)
        #expect(failure([#"[{"id": 3}, {"id": 2}, {"id": 1}]"#]) == nil)
    }
}
