#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A calendar date and a time of day, converted to and from seconds since 1970 as the C library
/// converts them: in UTC (`gmtime_r`, `timegm`) or in this machine's zone (`mktime`, which
/// reads TZ).
package struct CivilTime: Equatable, Sendable {
    package var year: Int, month: Int, day: Int
    package var hour: Int, minute: Int, second: Int

    package init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// The UTC date and time `seconds` after 1970 (before it, when negative).
    package init(utc seconds: Int64) {
        var moment = time_t(seconds)
        var parts = tm()
        gmtime_r(&moment, &parts)
        self.init(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                  hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// Seconds since 1970 of this date and time read as UTC. A day the month does not have rolls
    /// over into the next (`timegm` reads 2026-02-31 as March 3).
    package var secondsUTC: Int64 {
        var parts = self.parts
        return Int64(timegm(&parts))
    }

    /// Seconds since 1970 of this date and time read in this machine's zone, by the zone's own
    /// rule for that day (summer time or not); nil for a day the month does not have.
    package var secondsLocal: Int64? {
        var parts = self.parts
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        guard seconds != -1, Int(parts.tm_mday) == day else { return nil }
        return Int64(seconds)
    }

    private var parts: tm {
        var parts = tm()
        parts.tm_year = Int32(year - 1900); parts.tm_mon = Int32(month - 1); parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour); parts.tm_min = Int32(minute); parts.tm_sec = Int32(second)
        return parts
    }
}
