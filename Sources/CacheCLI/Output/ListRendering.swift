import FoundationEssentials
import Glibc
import OfflineCache

/// The human form, after the app this comes from: the account as a header, then each
/// transaction with vendor, `Mon, Nov 30` and `+ 12.00` / `- 4.50`; jokes as setup and
/// punchline. Stale rows are marked with their age; on a colour terminal each vendor has a
/// badge in its own stable colour, credits are green, debits red, and stale rows dimmed.
struct ListRendering {
    /// Marks for a redraw after a refresh: new, changed, and removed rows.
    var changes: Cache.RowChanges?
    /// The rows the refresh removed, as the preview showed them: drawn struck through.
    var removedRows: CachedRows?
    var color: Bool
    /// The terminal's width: every line is made to fit it (nil: no limit, as into a pipe).
    var columns: Int? = nil
    /// For generic records: the fields to show (`--columns`); nil for as many as fit.
    var fieldChoice: [String]? = nil
    /// For generic records keyed by one top-level field: that field, not shown twice.
    var keyField: String? = nil

    enum ANSI {
        static let reset = "\u{1B}[0m"
        static let dim = "\u{1B}[2m"
        static let bold = "\u{1B}[1m"
        static let green = "\u{1B}[32m"
        static let red = "\u{1B}[31m"
        static let yellow = "\u{1B}[33m"
        static let strike = "\u{1B}[9m"
    }

    /// The lines of the list: the header (the account's), then each row's lines, in order.
    func blocks(_ rows: CachedRows) -> (header: [String], rows: [[String]]) {
        var header: [String] = []
        var blocks: [[String]] = []
        switch rows {
        case .account(let account, let transactions):
            if let account {
                var line = paint(ANSI.bold, clean(account.name)) + "  balance " + money(account.balance)
                if account.stale { line += "  " + paint(ANSI.dim, "(stale, \(DurationText.age(account.ageSeconds)) old)") }
                header.append(fit(line))
            }
            let removed: [CachedTransaction]
            if case .account(_, let gone)? = removedRows { removed = gone } else { removed = [] }
            let layout = TransactionLayout(transactions + removed, rendering: self)
            for row in transactions {
                blocks.append([fit(transactionLine(row, mark: mark(for: row.id), layout))])
            }
            for row in removed {
                blocks.append([fit(transactionLine(row, mark: .removed, layout))])
            }
        case .jokes(let jokes):
            let removed: [CachedJoke]
            if case .jokes(let gone)? = removedRows { removed = gone } else { removed = [] }
            for joke in jokes { blocks.append(jokeLines(joke, mark: mark(for: String(joke.id))).map(fit)) }
            for joke in removed { blocks.append(jokeLines(joke, mark: .removed).map(fit)) }
        case .records(let fields, let records):
            let removed: [CachedRecord]
            if case .records(_, let gone)? = removedRows { removed = gone } else { removed = [] }
            let table = RecordTable(fields: fields, records: records + removed, rendering: self)
            header.append(fit(table.header()))
            for record in records { blocks.append([fit(table.line(record, mark: mark(for: record.key)))]) }
            for record in removed { blocks.append([fit(table.line(record, mark: .removed))]) }
        }
        return (header, blocks)
    }

    func lines(_ rows: CachedRows) -> [String] {
        let (header, blocks) = blocks(rows)
        return header + blocks.joined()
    }

    /// At most `height` lines: the header and the rows that fit whole, then `… N more rows`
    /// when some did not. For the live view, which redraws in place and so must fit the screen.
    func screenful(_ rows: CachedRows, height: Int, source: String) -> [String] {
        let (header, blocks) = blocks(rows)
        var lines = header
        var shown = 0
        let room = max(1, height - header.count - 1)
        for block in blocks {
            guard lines.count - header.count + block.count <= room else { break }
            lines += block
            shown += 1
        }
        if shown < blocks.count {
            lines.append(fit(paint(ANSI.dim, "… \(ProgressLine.grouped(blocks.count - shown)) more rows: 'cache list \(source) --offline' prints them all")))
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

    func markText(_ mark: Mark) -> String {
        guard changes != nil else { return "" }
        switch mark {
        case .none: return "  "
        case .inserted: return paint(ANSI.green, "+") + " "
        case .updated: return paint(ANSI.yellow, "~") + " "
        case .removed: return paint(ANSI.red, "-") + " "
        }
    }

    func amountText(_ row: CachedTransaction) -> String {
        // The type gives the direction; the amount is shown as upstream sent it, sign included.
        (row.isCredit ? "+ " : "- ") + money(row.amount)
    }

    /// The columns of the transaction lines, chosen so each line fits the terminal: the full form
    /// (`Mon, Nov 30`, `stale, 2h old`) when it fits, else a compact one (`Nov 30`, `stale 2h`),
    /// and the vendor column takes what is left.
    struct TransactionLayout {
        var vendorWidth: Int
        var amountWidth: Int
        var compact: Bool

        init(_ rows: [CachedTransaction], rendering: ListRendering) {
            amountWidth = rows.map { rendering.amountText($0).count }.max() ?? 0
            let natural = min(max(rows.map { DisplayWidth.of(rendering.clean($0.vendor)) }.max() ?? 0, 6), 32)
            compact = false
            vendorWidth = natural
            guard let columns = rendering.columns else { return }
            func fixed(_ compact: Bool) -> Int {
                let dateWidth = rows.map { DisplayWidth.of(ListRendering.shortDate($0.date, compact: compact)) }.max() ?? 0
                let suffix = rows.map { DisplayWidth.of(rendering.staleText($0.stale, $0.ageSeconds, compact: compact)) }.max() ?? 0
                return 2 + (rendering.changes == nil ? 0 : 2) + (rendering.color ? 4 : 0) + 2 + dateWidth + 2 + amountWidth + max(suffix, rendering.changes == nil ? 0 : 9)
            }
            if fixed(false) + natural > columns { compact = true }
            vendorWidth = max(4, min(natural, columns - fixed(compact)))
        }
    }

    private func transactionLine(_ row: CachedTransaction, mark: Mark, _ layout: TransactionLayout) -> String {
        let vendor = clean(row.vendor)
        var line = "  " + markText(mark)
        if color { line += badge(vendor) + " " }
        line += DisplayWidth.pad(DisplayWidth.fit(vendor, layout.vendorWidth), layout.vendorWidth)
        line += "  " + Self.shortDate(row.date, compact: layout.compact) + "  "
        let amount = amountText(row)
        line += String(repeating: " ", count: layout.amountWidth - amount.count) + paint(row.isCredit ? ANSI.green : ANSI.red, amount)
        line += mark == .removed ? "  removed" : staleText(row.stale, row.ageSeconds, compact: layout.compact)
        return dimIf(row.stale || mark == .removed, line)
    }

    /// `  stale, 2h old` (`  2h old` in colour, where dimming says stale); empty for a fresh row.
    func staleText(_ stale: Bool, _ ageSeconds: Int, compact: Bool = false) -> String {
        guard stale else { return "" }
        let age = DurationText.age(ageSeconds)
        if color { return "  " + paint(ANSI.dim, compact ? age : "\(age) old") }
        return compact ? "  stale \(age)" : "  stale, \(age) old"
    }

    /// A line cut to the terminal's width.
    private func fit(_ line: String) -> String {
        columns.map { DisplayWidth.fit(line, $0) } ?? line
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

    /// Generic records as a table: the key, then the fields chosen (`--columns`) or as many as
    /// fit the terminal, in the order the records first had them; each cell at most 30 columns.
    struct RecordTable {
        let rendering: ListRendering
        /// Indexes into the records' fields, and each column's width.
        let shown: [Int]
        let fields: [String]
        let keyWidth: Int
        let widths: [Int]

        init(fields: [String], records: [CachedRecord], rendering: ListRendering) {
            self.rendering = rendering
            self.fields = fields
            // On a terminal a cell is cut at 30 columns, so more fields fit; into a pipe or a file
            // every value is written whole.
            let longest = rendering.columns == nil ? Int.max : 30
            let cell = { (text: String) in min(DisplayWidth.of(rendering.clean(text)), longest) }
            keyWidth = max(3, records.map { cell($0.key) }.max() ?? 0)
            // A key that is one top-level field is shown once, as the key.
            let keyField = rendering.keyField
            let candidates = rendering.fieldChoice.map { choice in choice.compactMap { fields.firstIndex(of: $0) } }
                ?? fields.indices.filter { fields[$0] != keyField }
            let suffix = records.map { DisplayWidth.of(rendering.staleText($0.stale, $0.ageSeconds) + Self.pendingText($0)) }.max() ?? 0
            var used = 2 + (rendering.changes == nil ? 0 : 2) + keyWidth + max(suffix, rendering.changes == nil ? 0 : 9)
            var shown: [Int] = [], widths: [Int] = []
            for index in candidates {
                let width = max(cell(fields[index]), records.map { cell($0.fields[index] ?? "") }.max() ?? 0)
                if rendering.fieldChoice == nil, let room = rendering.columns, used + 2 + width > room { break }
                used += 2 + width
                shown.append(index)
                widths.append(width)
            }
            self.shown = shown
            self.widths = widths
        }

        func header() -> String {
            var line = "  " + (rendering.changes == nil ? "" : "  ") + DisplayWidth.pad("KEY", keyWidth)
            for (index, width) in zip(shown, widths) {
                line += "  " + DisplayWidth.pad(DisplayWidth.fit(rendering.clean(fields[index]), width), width)
            }
            return rendering.paint(ANSI.bold, String(line.reversed().drop { $0 == " " }.reversed()))
        }

        func line(_ record: CachedRecord, mark: Mark) -> String {
            var line = "  " + rendering.markText(mark) + DisplayWidth.pad(DisplayWidth.fit(rendering.clean(record.key), keyWidth), keyWidth)
            for (index, width) in zip(shown, widths) {
                line += "  " + DisplayWidth.pad(DisplayWidth.fit(rendering.clean(record.fields[index] ?? ""), width), width)
            }
            line = String(line.reversed().drop { $0 == " " }.reversed())
            line += mark == .removed ? "  removed" : rendering.staleText(record.stale, record.ageSeconds) + Self.pendingText(record)
            return rendering.dimIf(record.stale || mark == .removed, line)
        }

        /// `  pending`: a local edit of the row waits to reach the upstream ('cache outbox').
        static func pendingText(_ record: CachedRecord) -> String { record.pending ? "  pending" : "" }
    }

    // MARK: Colour

    /// 256-colour backgrounds that carry white text well.
    static let palette = [25, 29, 54, 88, 94, 130, 23, 60, 126, 166, 31, 100]

    /// The vendor's initial on its own stable colour, derived from the name.
    func badge(_ vendor: String) -> String {
        let initial = vendor.first(where: { $0.isLetter || $0.isNumber }).map { String($0).uppercased() } ?? "?"
        let colour = Self.palette[Int(Self.stableHash(vendor) % UInt64(Self.palette.count))]
        // Three columns whatever the initial: a wide one (CJK) takes two of them.
        let cell = DisplayWidth.of(initial) > 1 ? " \(initial)" : " \(initial) "
        return "\u{1B}[48;5;\(colour)m\u{1B}[97;1m" + cell + ANSI.reset
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

    func paint(_ code: String, _ text: String) -> String {
        color ? code + text + ANSI.reset : text
    }

    /// Dims a whole line, re-dimming after every reset inside it.
    func dimIf(_ dim: Bool, _ line: String) -> String {
        guard dim, color else { return line }
        return ANSI.dim + line.replacing(ANSI.reset, with: ANSI.reset + ANSI.dim) + ANSI.reset
    }

    // MARK: Text

    /// `2026-11-30T08:15:14Z` → `Mon, Nov 30` (compact: `Nov 30`).
    static func shortDate(_ iso: String, compact: Bool = false) -> String {
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
        let monthDay = "\(months[Int(parts.tm_mon)]) \(day)\(year)"
        return compact ? monthDay : "\(weekdays[Int(parts.tm_wday)]), \(monthDay)"
    }

    /// `1234.5` → `1,234.50`.
    static func money(_ value: Double) -> String {
        let fixed = String(cFormat: "%.2f", abs(value))
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
    func clean(_ text: String) -> String { TerminalSafe.escapeControl(text) }

    /// Upstream line breaks kept as separate lines; other control characters escaped.
    private func multiline(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { clean($0.trimmingSpaces()) }
    }
}

/// Grey placeholder rows in the shape of the real ones, shown while nothing is cached yet.
enum Skeleton {
    /// `columns`: the terminal's width; the bars are cut to it, so no skeleton row wraps.
    /// `shape`: the (empty) rows whose placeholders these are.
    static func lines(shape: CachedRows, count: Int, phase: Int, columns: Int? = nil) -> [String] {
        // Two shades of grey, alternating: the pulse.
        let shade = phase % 2 == 0 ? 238 : 243
        let block = { (width: Int) in String(repeating: "▆", count: width) }
        let widths = [(12, 10), (9, 7), (14, 9), (8, 8), (11, 6), (10, 9)]
        return (0..<count).map { index in
            let (a, b) = widths[index % widths.count]
            let body: String
            switch shape {
            case .account: body = "  " + block(3) + " " + block(a) + String(repeating: " ", count: 16 - a) + block(11) + "  " + block(b)
            case .jokes, .records: body = "  " + block(a + 20) + "  " + block(b + 6)
            }
            let line = "\u{1B}[38;5;\(shade)m" + body + ListRendering.ANSI.reset
            return columns.map { DisplayWidth.fit(line, $0, ellipsis: "") } ?? line
        }
    }
}
