import Foundation
import OfflineCache

/// The human form, after the app this comes from: the account as a header, then each
/// transaction with vendor, `Mon, Nov 30` and `+ 12.00` / `- 4.50`; jokes as setup and
/// punchline. Stale rows are marked with their age; on a colour terminal each vendor has a
/// badge in its own stable colour, credits are green, debits red, and stale rows dimmed.
struct ListRendering {
    /// Marks for a redraw after a refresh: new, changed, and removed rows.
    var changes: RowChanges?
    var color: Bool

    enum ANSI {
        static let reset = "\u{1B}[0m"
        static let dim = "\u{1B}[2m"
        static let bold = "\u{1B}[1m"
        static let green = "\u{1B}[32m"
        static let red = "\u{1B}[31m"
        static let yellow = "\u{1B}[33m"
        static let strike = "\u{1B}[9m"
    }

    func lines(_ rows: CachedRows) -> [String] {
        var lines: [String] = []
        switch rows {
        case .account(let account, let transactions):
            if let account {
                var header = paint(ANSI.bold, clean(account.name)) + "  balance " + money(account.balance)
                if account.stale { header += "  " + paint(ANSI.dim, "(stale, \(DurationText.age(account.ageSeconds)) old)") }
                lines.append(header)
            }
            let removed: [CachedTransaction]
            if case .account(_, let gone)? = changes?.removed { removed = gone } else { removed = [] }
            let all = transactions + removed
            let vendorWidth = min(max(all.map { $0.vendor.count }.max() ?? 0, 6), 32)
            let amountWidth = all.map { amountText($0).count }.max() ?? 0
            for row in transactions {
                lines.append(transactionLine(row, mark: mark(for: row.id), vendorWidth: vendorWidth, amountWidth: amountWidth))
            }
            for row in removed {
                lines.append(transactionLine(row, mark: .removed, vendorWidth: vendorWidth, amountWidth: amountWidth))
            }
        case .jokes(let jokes):
            let removed: [CachedJoke]
            if case .jokes(let gone)? = changes?.removed { removed = gone } else { removed = [] }
            for joke in jokes { lines += jokeLines(joke, mark: mark(for: String(joke.id))) }
            for joke in removed { lines += jokeLines(joke, mark: .removed) }
        }
        return lines
    }

    func render(_ rows: CachedRows) -> String {
        lines(rows).map { $0 + "\n" }.joined()
    }

    // MARK: Rows

    enum Mark { case none, inserted, updated, removed }

    private func mark(for id: String) -> Mark {
        guard let changes else { return .none }
        if changes.inserted.contains(id) { return .inserted }
        if changes.updated.contains(id) { return .updated }
        return .none
    }

    private func markText(_ mark: Mark) -> String {
        guard changes != nil else { return "" }
        switch mark {
        case .none: return "  "
        case .inserted: return paint(ANSI.green, "+") + " "
        case .updated: return paint(ANSI.yellow, "~") + " "
        case .removed: return paint(ANSI.red, "-") + " "
        }
    }

    private func amountText(_ row: CachedTransaction) -> String {
        // The type gives the direction; the amount is shown as upstream sent it, sign included.
        (row.isCredit ? "+ " : "- ") + money(row.amount)
    }

    private func transactionLine(_ row: CachedTransaction, mark: Mark, vendorWidth: Int, amountWidth: Int) -> String {
        let vendor = clean(row.vendor)
        let shown = vendor.count > vendorWidth ? String(vendor.prefix(vendorWidth - 1)) + "…" : vendor
        var line = "  " + markText(mark)
        if color { line += badge(vendor) + " " }
        line += shown.padding(toLength: vendorWidth, withPad: " ", startingAt: 0)
        line += "  " + Self.shortDate(row.date) + "  "
        let amount = amountText(row)
        line += String(repeating: " ", count: amountWidth - amount.count) + paint(row.isCredit ? ANSI.green : ANSI.red, amount)
        if mark == .removed {
            line += "  removed"
        } else if row.stale {
            line += "  " + (color ? paint(ANSI.dim, "\(DurationText.age(row.ageSeconds)) old") : "stale, \(DurationText.age(row.ageSeconds)) old")
        }
        return dimIf(row.stale || mark == .removed, line)
    }

    private func jokeLines(_ joke: CachedJoke, mark: Mark) -> [String] {
        var head = markText(mark) + paint(ANSI.bold, "#\(joke.id)") + " [\(clean(joke.type))]"
        if mark == .removed {
            head += "  removed"
        } else if joke.stale {
            head += "  " + (color ? "\(DurationText.age(joke.ageSeconds)) old" : "stale, \(DurationText.age(joke.ageSeconds)) old")
        }
        let dim = joke.stale || mark == .removed
        return [dimIf(dim, head)] + multiline(joke.setup).map { dimIf(dim, "  " + $0) }
            + multiline(joke.punchline).map { dimIf(dim, "  " + $0) } + [""]
    }

    // MARK: Colour

    /// 256-colour backgrounds that carry white text well.
    static let palette = [25, 29, 54, 88, 94, 130, 23, 60, 126, 166, 31, 100]

    /// The vendor's initial on its own stable colour, derived from the name.
    func badge(_ vendor: String) -> String {
        let initial = vendor.first(where: { $0.isLetter || $0.isNumber }).map { String($0).uppercased() } ?? "?"
        let colour = Self.palette[Int(Self.stableHash(vendor) % UInt64(Self.palette.count))]
        return "\u{1B}[48;5;\(colour)m\u{1B}[97;1m \(initial) " + ANSI.reset
    }

    /// FNV-1a: the same colour for a name in every process (Swift's Hasher is seeded per run).
    static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    private func paint(_ code: String, _ text: String) -> String {
        color ? code + text + ANSI.reset : text
    }

    /// Dims a whole line, re-dimming after every reset inside it.
    private func dimIf(_ dim: Bool, _ line: String) -> String {
        guard dim, color else { return line }
        return ANSI.dim + line.replacingOccurrences(of: ANSI.reset, with: ANSI.reset + ANSI.dim) + ANSI.reset
    }

    // MARK: Text

    /// `2026-11-30T08:15:14Z` → `Mon, Nov 30`.
    static func shortDate(_ iso: String) -> String {
        guard let date = Timestamp.parse(iso) else { return iso }
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let day = parts.tm_mday < 10 ? " \(parts.tm_mday)" : "\(parts.tm_mday)"
        // The year only when it is not this one: `Sat, Nov 28 2025`.
        var now = time_t(Date().timeIntervalSince1970)
        var today = tm()
        gmtime_r(&now, &today)
        let year = parts.tm_year == today.tm_year ? "" : " \(parts.tm_year + 1900)"
        return "\(weekdays[Int(parts.tm_wday)]), \(months[Int(parts.tm_mon)]) \(day)\(year)"
    }

    /// How long until `iso` for people: `next try in 17s`, `in 4m`; "now" once it has passed.
    static func untilText(_ iso: String) -> String {
        guard let date = Timestamp.parse(iso) else { return "at \(iso)" }
        let seconds = Int(date.timeIntervalSinceNow.rounded(.up))
        return seconds > 0 ? "in \(DurationText.age(seconds))" : "now"
    }

    /// `1234.5` → `1,234.50`.
    static func money(_ value: Double) -> String {
        let fixed = String(format: "%.2f", abs(value))
        let parts = fixed.split(separator: ".")
        var whole = String(parts[0])
        var grouped = ""
        while whole.count > 3 {
            grouped = "," + whole.suffix(3) + grouped
            whole = String(whole.dropLast(3))
        }
        return (value < 0 ? "-" : "") + whole + grouped + "." + parts[1]
    }

    private func money(_ value: Double) -> String { Self.money(value) }
    private func clean(_ text: String) -> String { Context.escapeControl(text) }

    /// Upstream line breaks kept as separate lines; other control characters escaped.
    private func multiline(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { clean($0.trimmingCharacters(in: .whitespaces)) }
    }
}

/// Grey placeholder rows in the shape of the real ones, shown while nothing is cached yet.
enum Skeleton {
    static func lines(kind: SourceKind, count: Int, phase: Int) -> [String] {
        // Two shades of grey, alternating: the pulse.
        let shade = phase % 2 == 0 ? 238 : 243
        let block = { (width: Int) in String(repeating: "▆", count: width) }
        let widths = [(12, 10), (9, 7), (14, 9), (8, 8), (11, 6), (10, 9)]
        return (0..<count).map { index in
            let (a, b) = widths[index % widths.count]
            let body = kind == .account
                ? "  " + block(3) + " " + block(a) + String(repeating: " ", count: 16 - a) + block(11) + "  " + block(b)
                : "  " + block(a + 20) + "  " + block(b + 6)
            return "\u{1B}[38;5;\(shade)m" + body + ListRendering.ANSI.reset
        }
    }
}
