import Foundation
import Testing
@testable import OfflineCache

/// CSV bodies (RFC 4180) into records: every rule of the format, and each kind of bad data
/// refused with the line it is on.
@Suite(.computing) struct CSVDecoderTests {
    static func layout(_ key: String = "id", delimiter: UInt8? = nil) -> RecordLayout {
        RecordLayout(key: key.split(separator: ",").map { JSONPath([String($0)]) }, delimiter: delimiter)
    }

    static func records(_ text: String, key: String = "id", delimiter: UInt8? = nil) throws -> [String: String] {
        try records(Data(text.utf8), key: key, delimiter: delimiter)
    }

    static func records(_ body: Data, key: String = "id", delimiter: UInt8? = nil) throws -> [String: String] {
        let page = try CSVDecoder.decode(body, layout: layout(key, delimiter: delimiter), deadline: nil)
        return Dictionary(uniqueKeysWithValues: (0..<page.records.count).map { (page.records.key($0), page.records.json($0)) })
    }

    @Test func quotedFieldsHoldDelimitersQuotesAndLineBreaks() throws {
        let text = "id,text\r\n1,\"a, b\"\r\n2,\"say \"\"hi\"\"\"\r\n3,\"two\nlines\"\r\n4,\"\"\r\n5,plain \"quote\" inside\r\n"
        #expect(try Self.records(text) == [
            "1": #"{"id":1,"text":"a, b"}"#,
            "2": #"{"id":2,"text":"say \"hi\""}"#,
            "3": #"{"id":3,"text":"two\nlines"}"#,
            "4": #"{"id":4,"text":""}"#,
            "5": #"{"id":5,"text":"plain \"quote\" inside"}"#,
        ])
    }

    @Test func lineEndsByteOrderMarkAndBlankLines() throws {
        let expected = ["1": #"{"id":1,"n":"a"}"#, "2": #"{"id":2,"n":"b"}"#]
        #expect(try Self.records("id,n\r\n1,a\r\n2,b\r\n") == expected)
        #expect(try Self.records("id,n\n1,a\n2,b") == expected)      // LF, no final line break
        #expect(try Self.records("id,n\r1,a\r2,b\r") == expected)    // CR alone
        #expect(try Self.records("id,n\n\n1,a\n\r\n2,b\n\n") == expected)
        #expect(try Self.records(Data([0xEF, 0xBB, 0xBF]) + Data("id,n\n1,a\n2,b\n".utf8)) == expected)
    }

    @Test func otherDelimiters() throws {
        #expect(try Self.records("id;n\n1;\"a;b\"\n", delimiter: UInt8(ascii: ";")) == ["1": #"{"id":1,"n":"a;b"}"#])
        #expect(try Self.records("id\tn\n1\ta,b\n", delimiter: UInt8(ascii: "\t")) == ["1": #"{"id":1,"n":"a,b"}"#])
        #expect(RecordLayout.delimiter("tab") == UInt8(ascii: "\t"))
        #expect(RecordLayout.delimiter("\"") == nil && RecordLayout.delimiter(",,") == nil && RecordLayout.delimiter("") == nil)
    }

    /// A value that is a JSON number is a number; anything else is text. Each row on its own.
    @Test func numbersAreNumbersAndTheRestText() throws {
        let records = try Self.records("id,price,zip,mixed,blank\n1,1.50,007,3,\n2,2e1,010,x,\n")
        #expect(records["1"] == #"{"blank":"","id":1,"mixed":3,"price":1.5,"zip":"007"}"#)
        #expect(records["2"] == #"{"blank":"","id":2,"mixed":"x","price":20,"zip":"010"}"#)
        // Another row's text changes nothing in this one.
        let alone = try Self.records("id,price,zip,mixed,blank\n1,1.50,007,3,\n")
        #expect(alone["1"] == records["1"])
        #expect(CSVDecoder.canonicalNumber("-0.5") == "-0.5" && CSVDecoder.canonicalNumber(" 1") == nil
                && CSVDecoder.canonicalNumber("1.") == nil && CSVDecoder.canonicalNumber("+1") == nil)
    }

    @Test func keysOfSeveralColumnsAreJSONArrays() throws {
        let records = try Self.records("code,year,v\nab,2024,1\nab,2025,2\n", key: "code,year")
        #expect(Set(records.keys) == [#"["ab","2024"]"#, #"["ab","2025"]"#])
    }

    /// A key is its field's text: versions 1.1 and 1.10 are two records, and 1.0 stays 1.0.
    @Test func keysAreTheFieldsText() throws {
        #expect(Set(try Self.records("id,n\n1.1,a\n1.10,b\n1.0,c\n").keys) == ["1.1", "1.10", "1.0"])
    }

    @Test func anOpenQuoteIsReportedWhereItOpens() {
        #expect(throws: UpstreamError.badData("line 3: a quoted field is not closed before the end of the body")) {
            // The row starts on line 2; its second field's quote opens on line 3.
            try Self.records("id,n,m\n1,\"x\ny\",\"z\n")
        }
    }

    @Test func theDeadlineEndsALongTable() throws {
        var text = "id,n\n"
        for row in 0..<200_000 { text += "\(row),\"row \(row)\"\n" }
        let deadline = DecodeDeadline(ContinuousClock.now, seconds: 0.01)
        #expect(throws: UpstreamError.decodeTimedOut(seconds: 0.01)) {
            try CSVDecoder.decode(Data(text.utf8), layout: Self.layout(), deadline: deadline)
        }
    }

    @Test func theSameRowTwiceIsKeptOnce() throws {
        #expect(try Self.records("id,n\n1,a\n1,a\n2,b\n").count == 2)
    }

    struct Bad: CustomTestStringConvertible, Sendable {
        var body: String
        var key = "id"
        var message: String
        var testDescription: String { message }
    }

    static let bad: [Bad] = [
        Bad(body: "", message: "the CSV body is empty: no header row"),
        Bad(body: "id,n,n\n1,a,b\n", message: "line 1: two columns are named 'n'"),
        Bad(body: "id,,x\n1,a,b\n", message: "line 1: column 2 of the header has no name"),
        Bad(body: "id,n\n1,a\n,b\n", message: "line 3: no value in the key column 'id'"),
        Bad(body: "id,n\n1,a\n2,b\n1,c\n", message: "lines 2 and 4 have the same key (1) and different contents"),
        Bad(body: "id,n\n1,a\n2,b,c\n", message: "line 3: 3 fields where the header has 2"),
        Bad(body: "id,n\n1,\"a\nb\"\n2\n", message: "line 4: 1 field where the header has 2"),
        Bad(body: "id,n\n1,\"open\n", message: "line 2: a quoted field is not closed before the end of the body"),
        Bad(body: "id,n\n1,\"a\"b\n", message: "line 2: text after the closing quote of field 2"),
        Bad(body: "id,n\n1,a\n", key: "code", message: "the key column 'code' is not in the header (its columns: id, n)"),
    ]

    @Test(arguments: bad)
    func badDataNamesTheLine(_ test: Bad) {
        #expect(throws: UpstreamError.badData(test.message)) { try Self.records(test.body, key: test.key) }
    }

    @Test func bytesThatAreNotUTF8NameTheirLine() {
        let body = Data("id,n\n1,a\n2,".utf8) + Data([0xC3, 0x28]) + Data("\n".utf8)
        #expect(throws: UpstreamError.badData("line 3: field 2 is not valid UTF-8")) { try Self.records(body) }
    }
}
