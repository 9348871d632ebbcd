import Foundation
import OfflineCache

/// `cache list NAME`: the cached rows at once, from the cache only.
enum ListCommand {
    static func run(_ options: Command.List, _ context: Context) throws -> Int32 {
        let database = try context.open(create: false)
        let source = try SourceStore(database).named(options.name)
        let rows = try CacheReader(database).rows(of: source, staleOnly: options.staleOnly, limit: options.limit)
        let console = context.console
        if rows.count == 0 && !options.staleOnly {
            console.err("Nothing cached for '\(source.name)' yet; run 'cache sync \(source.name)'.")
        }
        switch options.format {
        case .json: console.out(json(rows))
        case .csv: console.out(csv(rows))
        case .human: console.out(ListRendering.human(rows))
        }
        return ExitCode.success
    }

    static func json(_ rows: CachedRows) -> String {
        var out = "["
        func append(_ value: JSONValue, first: Bool) {
            if !first { out += JSONValue.arraySeparator }
            value.write(to: &out)
        }
        switch rows {
        case .account(_, let transactions):
            for (index, row) in transactions.enumerated() {
                append(.object([
                    ("id", .string(row.id)), ("source", .string(row.source)), ("account", .optional(row.account)),
                    ("type", .int(row.type)), ("vendor", .string(row.vendor)), ("amount", .double(row.amount)),
                    ("date", .string(row.date)), ("seen_at", .string(row.seenAt)), ("stale", .bool(row.stale)),
                ]), first: index == 0)
            }
        case .jokes(let jokes):
            for (index, row) in jokes.enumerated() {
                append(.object([
                    ("id", .int(row.id)), ("type", .string(row.type)), ("setup", .string(row.setup)),
                    ("punchline", .string(row.punchline)), ("source", .string(row.source)),
                    ("seen_at", .string(row.seenAt)), ("stale", .bool(row.stale)),
                ]), first: index == 0)
            }
        }
        return out + "]\n"
    }

    static func csv(_ rows: CachedRows) -> String {
        switch rows {
        case .account(_, let transactions):
            return CSVText.row(["id", "source", "account", "type", "vendor", "amount", "date", "seen_at", "stale"])
                + transactions.map {
                    CSVText.row([$0.id, $0.source, $0.account ?? "", String($0.type), $0.vendor, JSONValue.number($0.amount),
                                 $0.date, $0.seenAt, $0.stale ? "1" : "0"])
                }.joined()
        case .jokes(let jokes):
            return CSVText.row(["id", "type", "setup", "punchline", "source", "seen_at", "stale"])
                + jokes.map {
                    CSVText.row([String($0.id), $0.type, $0.setup, $0.punchline, $0.source, $0.seenAt, $0.stale ? "1" : "0"])
                }.joined()
        }
    }
}

/// The human form, after the app this comes from: the account as a header, then each
/// transaction with vendor, `Mon, Nov 30` and `+ 12.00` / `- 4.50`; jokes as setup and
/// punchline. Stale rows are marked with their age.
enum ListRendering {
    static func human(_ rows: CachedRows) -> String {
        var out = ""
        switch rows {
        case .account(let account, let transactions):
            if let account {
                out += "\(clean(account.name))  balance \(money(account.balance))"
                out += account.stale ? "  (stale, \(DurationText.age(account.ageSeconds)) old)\n" : "\n"
            }
            let vendorWidth = min(max(transactions.map { $0.vendor.count }.max() ?? 0, 6), 32)
            let amounts = transactions.map { ($0.isCredit ? "+ " : "- ") + money(abs($0.amount)) }
            let amountWidth = amounts.map(\.count).max() ?? 0
            for (row, amount) in zip(transactions, amounts) {
                let vendor = clean(row.vendor)
                let shownVendor = vendor.count > vendorWidth ? String(vendor.prefix(vendorWidth - 1)) + "…" : vendor
                out += "  " + shownVendor.padding(toLength: vendorWidth, withPad: " ", startingAt: 0)
                out += "  " + shortDate(row.date)
                out += "  " + String(repeating: " ", count: amountWidth - amount.count) + amount
                out += row.stale ? "  stale, \(DurationText.age(row.ageSeconds)) old\n" : "\n"
            }
        case .jokes(let jokes):
            for joke in jokes {
                out += "#\(joke.id) [\(clean(joke.type))]"
                out += joke.stale ? "  stale, \(DurationText.age(joke.ageSeconds)) old\n" : "\n"
                out += "  \(multiline(joke.setup))\n  \(multiline(joke.punchline))\n\n"
            }
        }
        return out
    }

    /// `2026-11-30T08:15:14Z` → `Mon, Nov 30`.
    static func shortDate(_ iso: String) -> String {
        guard let date = Timestamp.parse(iso) else { return iso }
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let day = parts.tm_mday < 10 ? " \(parts.tm_mday)" : "\(parts.tm_mday)"
        return "\(weekdays[Int(parts.tm_wday)]), \(months[Int(parts.tm_mon)]) \(day)"
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

    private static func clean(_ text: String) -> String { Context.escapeControl(text) }

    /// Upstream line breaks kept as line breaks, indented under the row; other control characters escaped.
    private static func multiline(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { clean($0.trimmingCharacters(in: .whitespaces)) }
            .joined(separator: "\n  ")
    }
}
