/// Durations as users write them: `90`, `90s`, `15m`, `2h`, `1d`.
public enum DurationText {
    /// Seconds for `text`, or nil when it is not a positive duration in that form.
    public static func seconds(_ text: String) -> Int? {
        guard let last = text.last else { return nil }
        let unit: Int
        var digits = Substring(text)
        switch last {
        case "s": unit = 1; digits = digits.dropLast()
        case "m": unit = 60; digits = digits.dropLast()
        case "h": unit = 3600; digits = digits.dropLast()
        case "d": unit = 86_400; digits = digits.dropLast()
        default: unit = 1
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let value = Int(digits), value > 0, value <= Int(Int32.max) / unit
        else { return nil }
        return value * unit
    }

    /// The shortest exact form: 900 → `15m`, 90 → `90s`.
    public static func format(_ seconds: Int) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }

    /// A rough age for people: `42s`, `3m`, `5h`, `2d`.
    public static func age(_ seconds: Int) -> String {
        switch seconds {
        case ..<60: return "\(max(seconds, 0))s"
        case ..<3600: return "\(seconds / 60)m"
        case ..<86_400: return "\(seconds / 3600)h"
        default: return "\(seconds / 86_400)d"
        }
    }
}
