import FoundationEssentials

/// Durations as users write them: `90`, `90s`, `15m`, `2h`, `1d`, and combined, largest unit
/// first, as Go and systemd write them: `1h30m`, `2d12h`, `1m30s`.
package enum DurationText {
    /// Seconds for `text`, or nil when it is not a positive duration in that form.
    package static func seconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        if text.allSatisfy(\.isNumber) { return bounded(Int(text)) }
        let units: [Character: Int] = ["d": 86_400, "h": 3600, "m": 60, "s": 1]
        var total = 0
        var digits = ""
        var previousUnit = Int.max
        for character in text {
            if character.isNumber { digits.append(character); continue }
            // Each unit once, largest first, each after its own digits.
            guard let unit = units[character], !digits.isEmpty, unit < previousUnit,
                  let value = Int(digits), value <= Int(Int32.max) / unit else { return nil }
            total += value * unit
            previousUnit = unit
            digits = ""
        }
        guard digits.isEmpty else { return nil }  // trailing digits without a unit: "1h30"
        return bounded(total)
    }

    private static func bounded(_ value: Int?) -> Int? {
        guard let value, value > 0, value <= Int(Int32.max) else { return nil }
        return value
    }

    /// The shortest exact form: 900 → `15m`, 90 → `90s`.
    package static func format(_ seconds: Int) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }

    /// A rough age for people: `42s`, `3m`, `5h`, `2d`.
    package static func age(_ seconds: Int) -> String {
        switch seconds {
        case ..<60: return "\(max(seconds, 0))s"
        case ..<3600: return "\(seconds / 60)m"
        case ..<86_400: return "\(seconds / 3600)h"
        default: return "\(seconds / 86_400)d"
        }
    }

    /// How long until the stored time `iso`, for people: `in 17s`, `in 4m`; "now" once it has passed.
    package static func until(_ iso: String) -> String {
        guard let date = Timestamp.parse(iso) else { return "at \(iso)" }
        let seconds = Int(date.timeIntervalSinceNow.rounded(.up))
        return seconds > 0 ? "in \(age(seconds))" : "now"
    }
}
