import Foundation
@testable import OfflineCache
import Testing

/// Paths as options write them, and as the database keeps them: each read back the same.
@Suite(.computing) struct JSONPathTests {
    @Test(arguments: [
        ("$", [String]()), ("$.a.b", ["a", "b"]), ("$['@odata.nextLink']", ["@odata.nextLink"]), ("$.data[\"items\"]", ["data", "items"]),
        ("user.id", ["user", "id"]), ("['a.b'].c", ["a.b", "c"]), ("[\"it's\"]", ["it's"]), ("it's", ["it's"]),
        // Written before brackets were read: any character but `.` and `$` was a name's.
        ("items[]", ["items[]"]), ("a]b", ["a]b"]), ("Driver's License", ["Driver's License"]),
    ] as [(String, [String])])
    func aPathReadsAndWritesBackTheSame(_ text: String, _ keys: [String]) throws {
        let path = try #require(JSONPath(text))
        #expect(path.keys == keys)
        #expect(JSONPath(path.description) == path, "\(path.description)")
        if !keys.isEmpty { #expect(JSONPath(path.dotted) == path, "\(path.dotted)") }
    }

    @Test(arguments: ["", "$.", "$x", "$['unclosed", "['a'b]", "$..a", "a.$b"])
    func aMalformedPathIsRefused(_ text: String) {
        #expect(JSONPath(text) == nil)
    }

    @Test func keyFieldsSplitOnCommasOutsideBrackets() {
        #expect(JSONPath.fields("id,['a,b'],user.id,it's").map { $0?.keys } == [["id"], ["a,b"], ["user", "id"], ["it's"]])
        // Stored back (`keyDescription`) and read again: the same key.
        let layout = RecordLayout(key: JSONPath.fields("id,['a,b'],it's").compactMap { $0 })
        #expect(JSONPath.fields(layout.keyDescription).compactMap { $0 } == layout.key)
    }

    /// The lag is taken off a time or a number, digit for digit: no digit is lost to a Double,
    /// and a number past Int64's edge neither overflows nor is sent unchanged.
    @Test func theLagIsSubtractedWithoutOverflow() {
        let incremental = RecordLayout.Incremental(sinceParam: "since", cursorField: JSONPath(["t"]), lagSeconds: 300)
        #expect(incremental.since("2026-11-28T10:00:00Z") == "2026-11-28T09:55:00Z")
        #expect(incremental.since("2026-11-28T10:00:00.250Z") == "2026-11-28T09:55:00.250Z")
        #expect(incremental.since("1700000000") == "1699999700")
        #expect(incremental.since("1700000000.123456") == "1699999700.123456")
        #expect(incremental.since("18446744073709551616") == "18446744073709551316")
        #expect(incremental.since("1000") == "700" && incremental.since("300.5") == "0.5" && incremental.since("10300") == "10000")
        #expect(incremental.since("-9223372036854775808") == "-9223372036854776108")
        #expect(incremental.since("-0.25") == "-300.25")
        // Smaller than the lag: through a Double, which is exact enough there.
        #expect(incremental.since("5") == "-295" && incremental.since("1e3") == "700")
        #expect(incremental.since("nan") == "nan" && incremental.since("2026-11-28T10:00:00+01:00") == "2026-11-28T10:00:00+01:00")
    }

    /// `--since-format` writes the watermark, less the lag, in the API's form, in UTC, as the
    /// strftime directives Airbyte's manifests use do: a time or seconds since 1970 read, any
    /// other watermark sent as it is; a directive it does not write is refused.
    @Test func theWatermarkIsWrittenInTheAPIsFormat() throws {
        var incremental = RecordLayout.Incremental(sinceParam: "since", cursorField: JSONPath(["t"]), lagSeconds: 300)
        let format: TimeFormat = try #require(TimeFormat("%Y-%m-%d %H:%M:%S.%f%z (%Z)"))
        incremental.sinceFormat = format
        #expect(incremental.since("2026-11-28T10:00:00.250Z") == "2026-11-28 09:55:00.250000+0000 (UTC)")
        #expect(incremental.since("2026-11-28T11:00:00+01:00") == "2026-11-28 09:55:00.000000+0000 (UTC)")
        incremental.sinceFormat = TimeFormat("%s|%%Y")
        #expect(incremental.since("1700000300") == "1700000000|%Y")
        #expect(incremental.since("c-42") == "c-42")
        // The CDK's whole-pattern numbers: a watermark in milliseconds is read as milliseconds.
        incremental.sinceFormat = TimeFormat("%ms")
        #expect(incremental.since("1700000300000") == "1700000000000")
        incremental.sinceFormat = TimeFormat("%s_as_float")
        #expect(incremental.since("1700000300.25") == "1700000000.25")
        incremental.sinceFormat = TimeFormat("%epoch_microseconds")
        #expect(incremental.since("2023-11-14T22:18:20Z") == "1699999999999999" || incremental.since("2023-11-14T22:18:20Z") == "1700000000000000")
        #expect(TimeFormat("%Y-%j") == nil && TimeFormat("no directive") == nil && TimeFormat("%") == nil)
        // Inside a longer pattern, %m is the month and s its text, as strftime reads it.
        #expect(TimeFormat("%Y-%ms")?.format(Date(timeIntervalSince1970: 1_700_000_000)) == "2023-11s")
    }
}
