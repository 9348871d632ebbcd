/// A transaction's time to the second, UTC, kept as the decimal digits `yyyyMMddHHmmss` of one
/// integer. It orders exactly as its ISO 8601 text does, so a response can be sorted into the
/// table's order with integer comparisons, and a million of them allocate nothing.
package struct TransactionDate: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    package let digits: Int64

    init(digits: Int64) {
        self.digits = digits
    }

    /// Upstream's `2026-11-01 08:15:14`, or nil when it is not a real date in that form.
    package init?(upstream bytes: UnsafeBufferPointer<UInt8>) {
        guard let digits = Self.parse(bytes, separator: UInt8(ascii: " "), zulu: false) else { return nil }
        self.digits = digits
    }

    package init?(upstream text: String) {
        var text = text
        guard let date = text.withUTF8({ TransactionDate(upstream: $0) }) else { return nil }
        self = date
    }

    /// The stored form, `2026-11-01T08:15:14Z`.
    package init?(iso bytes: UnsafeBufferPointer<UInt8>) {
        guard let digits = Self.parse(bytes, separator: UInt8(ascii: "T"), zulu: true) else { return nil }
        self.digits = digits
    }

    package init?(iso text: String) {
        var text = text
        guard let date = text.withUTF8({ TransactionDate(iso: $0) }) else { return nil }
        self = date
    }

    /// A date written in code, in the stored form; anything else is a programmer's error.
    package init(stringLiteral text: String) {
        guard let date = TransactionDate(iso: text) else { preconditionFailure("not an ISO 8601 UTC date: \(text)") }
        self = date
    }

    /// The stored form, `2026-11-01T08:15:14Z`.
    package var iso: String { withISOBytes { String(decoding: $0, as: UTF8.self) } }

    package var description: String { iso }

    package static func < (a: Self, b: Self) -> Bool { a.digits < b.digits }

    /// The stored form's 20 bytes, built on the stack (for binding and hashing).
    package func withISOBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.isoCount) { buffer in
            writeISO(into: buffer.baseAddress!)
            return try body(UnsafeBufferPointer(buffer))
        }
    }

    /// The length of the stored form.
    package static let isoCount = 20

    /// Writes the stored form's 20 bytes at `buffer`.
    package func writeISO(into buffer: UnsafeMutablePointer<UInt8>) {
        var rest = digits
        // Fill right to left: ss, mm, HH, dd, MM, yyyy; the separators go between.
        func put(_ position: Int, _ count: Int) {
            var index = position + count - 1
            while index >= position {
                buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                index -= 1
            }
        }
        put(17, 2); put(14, 2); put(11, 2); put(8, 2); put(5, 2); put(0, 4)
        buffer[4] = UInt8(ascii: "-"); buffer[7] = UInt8(ascii: "-"); buffer[10] = UInt8(ascii: "T")
        buffer[13] = UInt8(ascii: ":"); buffer[16] = UInt8(ascii: ":"); buffer[19] = UInt8(ascii: "Z")
    }

    /// The days of a month in the proleptic Gregorian calendar: February 30th and February
    /// 29th of a common year are not dates.
    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `yyyy-MM-dd?HH:mm:ss` (and `Z` when `zulu`), checked field by field and against the calendar.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, separator: UInt8, zulu: Bool) -> Int64? {
        guard bytes.count == (zulu ? 20 : 19), bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == separator, bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              !zulu || bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        var digits: Int64 = 0
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                guard bytes[i] >= 48 && bytes[i] <= 57 else { return nil }
                value = value * 10 + Int64(bytes[i] - 48)
                digits = digits * 10 + Int64(bytes[i] - 48)
            }
            return value
        }
        guard let year = number(0..<4),
              let month = number(5..<7), (1...12).contains(month),
              let day = number(8..<10), (1...daysIn(month: month, year: year)).contains(day),
              let hour = number(11..<13), hour < 24,
              let minute = number(14..<16), minute < 60,
              let second = number(17..<19), second < 60
        else { return nil }
        return digits
    }
}
