import FoundationEssentials

/// A moment in the past as `list --as-of` and `?as_of=` take it.
package enum Moment {
    /// Why a text is not a moment: `expected` says what is, `future` that it is one still to come.
    package enum Unreadable: Error, Equatable {
        case expected(String)
        case future
    }

    /// RFC 3339, a local time as `history` and `diff` print it (`2026-11-30 10:00:00`, no zone),
    /// or a duration ago (`2h`, `1h30m`: that long ago), as an RFC 3339 timestamp. Not in the
    /// future.
    package static func parse(_ text: String, now: Date = Date()) throws(Unreadable) -> String {
        let date: Date
        if let seconds = DurationText.seconds(text) {
            date = now.addingTimeInterval(-Double(seconds))
        } else if let parsed = Timestamp.parseRFC3339(text, unzonedIsLocal: true) {
            // `history` prints a run's time cut to the second: pasted back, it means that whole
            // second (up to its end, never past now), so the run it names counts as done by then.
            let wholeSecondNoZone = text.utf8.count == 19
            date = wholeSecondNoZone ? min(parsed.addingTimeInterval(0.999), now) : parsed
        } else {
            throw .expected("a time such as 2026-11-30T09:00:00Z, a local time such as 2026-11-30 10:00:00 (as history prints it), or how long ago, such as 2h, 3d or 1h30m")
        }
        guard date <= now else { throw .future }
        return Timestamp.format(date)
    }
}
