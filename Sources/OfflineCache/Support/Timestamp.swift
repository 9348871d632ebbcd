import FoundationEssentials

/// The one text form of a moment that this project stores and prints: ISO 8601 UTC with
/// milliseconds, `2026-11-30T02:00:00.000Z`. Every stored time has this exact shape, so
/// times compare correctly as text inside SQLite.
package enum Timestamp {
    package static func now() -> String { format(Date()) }

    package static func format(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        // Floored, so a moment before 1970 keeps its milliseconds between 0 and 999.
        var (whole, part) = ms.quotientAndRemainder(dividingBy: 1000)
        if part < 0 { (whole, part) = (whole - 1, part + 1000) }
        let millis = Int(part)
        let time = CivilTime(utc: whole)
        let year = time.year
        guard (0...9999).contains(year) else {
            return String(cFormat: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, time.month, time.day,
                          time.hour, time.minute, time.second, millis)
        }
        // The digits placed by hand: `cFormat`'s variadic call cost a twentieth of a request of
        // `cache serve`, which stamps every read's lease check with the time.
        return String(unsafeUninitializedCapacity: 24) { text in
            func put(_ value: Int, at end: Int, digits: Int) {
                var value = value
                for index in stride(from: end + digits - 1, through: end, by: -1) {
                    text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, at: 0, digits: 4)
            put(time.month, at: 5, digits: 2)
            put(time.day, at: 8, digits: 2)
            put(time.hour, at: 11, digits: 2)
            put(time.minute, at: 14, digits: 2)
            put(time.second, at: 17, digits: 2)
            put(millis, at: 20, digits: 3)
            for (index, byte) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")] as [(Int, Unicode.Scalar)] {
                text[index] = UInt8(ascii: byte)
            }
            return 24
        }
    }

    /// Parses the stored form (with or without milliseconds): RFC 3339 in UTC.
    package static func parse(_ text: String) -> Date? {
        guard text.utf8.count >= 20, text.utf8.last == UInt8(ascii: "Z") else { return nil }
        return parseRFC3339(text)
    }

    /// A moment as people write it, RFC 3339: `2026-11-30T09:00:00Z`, with fractions of a second
    /// or an offset (`+01:00`), `t`/`z` or a space for the `T`; or a bare date, its midnight UTC.
    /// With `unzonedIsLocal`, a date and time with no zone (`2026-11-30 10:00:00`, as `history`
    /// and `diff` print it) is this machine's local time.
    package static func parseRFC3339(_ text: String, unzonedIsLocal: Bool = false) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[from..<(from + count)] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var hour = 0, minute = 0, second = 0, fraction = 0.0, offset = 0
        if bytes.count > 10 {
            guard [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(bytes[10]), bytes.count >= 19,
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  let h = number(11, 2), let m = number(14, 2), let s = number(17, 2), h < 24, m < 60, s < 61 else { return nil }
            (hour, minute, second) = (h, m, min(s, 59))
            var index = 19
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                var scale = 0.1
                index += 1
                let start = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                    fraction += Double(bytes[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
                guard index > start else { return nil }
            }
            if index == bytes.count {
                guard unzonedIsLocal else { return nil }
                return localTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
                    .map { $0.addingTimeInterval(fraction) }
            }
            switch bytes[index] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                guard index + 1 == bytes.count else { return nil }
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                      let oh = number(index + 1, 2), let om = number(index + 4, 2), oh < 24, om < 60 else { return nil }
                offset = (oh * 3600 + om * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            default:
                return nil
            }
        }
        let seconds = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second).secondsUTC
        // 2026-02-31 is read as March 3: a day the month does not have is no date.
        guard CivilTime(utc: seconds).day == day else { return nil }
        return Date(timeIntervalSince1970: Double(seconds - Int64(offset)) + fraction)
    }

    /// A wall-clock time in this machine's time zone (TZ), as mktime reads it; nil for a day the
    /// month does not have.
    private static func localTime(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard let seconds = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second).secondsLocal else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }
}
