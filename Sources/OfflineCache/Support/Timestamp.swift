import FoundationEssentials
import Glibc

/// The one text form of a moment that this project stores and prints: ISO 8601 UTC with
/// milliseconds, `2026-11-30T02:00:00.000Z`. Every stored time has this exact shape, so
/// times compare correctly as text inside SQLite.
package enum Timestamp {
    package static func now() -> String { format(Date()) }

    package static func format(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(ms / 1000)
        let millis = Int(ms - Int64(seconds) * 1000)
        var tm = tm()
        gmtime_r(&seconds, &tm)
        return String(cFormat: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                      Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                      Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), millis)
    }

    /// Parses the stored form (with or without milliseconds).
    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for i in from..<(from + count) {
                guard i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 else { return nil }
                value = value * 10 + Int(bytes[i] - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2)
        else { return nil }
        var millis = 0
        if bytes.count == 24, let ms = number(20, 3) { millis = ms }
        var tm = tm()
        tm.tm_year = Int32(year - 1900); tm.tm_mon = Int32(month - 1); tm.tm_mday = Int32(day)
        tm.tm_hour = Int32(hour); tm.tm_min = Int32(minute); tm.tm_sec = Int32(second)
        let seconds = timegm(&tm)
        return Date(timeIntervalSince1970: Double(seconds) + Double(millis) / 1000)
    }
}
