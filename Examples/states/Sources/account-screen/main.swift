// account-screen DB_PATH URL: the seed app's account screen in library form. Its client is a
// `SourceModel<Source.Kind.AccountTransaction>` (the seed's `Client` with its `loadingStatus`, each row a typed
// transaction), observed as SwiftUI would; each time the screen would change, it prints what
// the screen shows: skeleton cells while there is nothing to show, the holder and balance, the
// transactions newest first (`Sun, Nov 29`, `+ 19.99` or `- 23.50`), a row that does not
// decode as such (its field and what was found), and a failure under the rows it keeps. It
// ends once the screen settles.
import Glibc
import Observation
import OfflineCache

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: account-screen DB_PATH URL")
    exit(64)
}
let cache = try Cache(path: arguments[1])
if try !cache.hasSource(named: "bank") {
    try cache.addSource(name: "bank", kind: .account, url: arguments[2])
}

/// `2026-11-29…` as the seed shows it: `Sun, Nov 29`.
func shortDate(_ date: String) -> String {
    let parts = date.prefix(10).split(separator: "-").compactMap { Int($0) }
    guard parts.count == 3 else { return date }
    let (year, month, day) = (parts[0], parts[1], parts[2])
    // Sakamoto's method: the day of the week, 0 for Sunday.
    let offsets = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4]
    let y = month < 3 ? year - 1 : year
    let weekday = (y + y / 4 - y / 100 + y / 400 + offsets[month - 1] + day) % 7
    let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    return "\(weekdays[weekday]), \(months[month - 1]) \(day < 10 ? "0" : "")\(day)"
}

/// `1,234.56`: the seed's amounts, without their sign.
func money(_ amount: Double) -> String {
    let cents = Int((abs(amount) * 100).rounded())
    var whole = String(cents / 100)
    var grouped = ""
    while whole.count > 3 {
        grouped = "," + whole.suffix(3) + grouped
        whole = String(whole.dropLast(3))
    }
    return whole + grouped + ".\(cents % 100 < 10 ? "0" : "")\(cents % 100)"
}

/// What the screen shows now.
@MainActor func screen(_ model: SourceModel<Source.Kind.AccountTransaction>) -> String {
    let status = switch model.status {
    case .initial: "initial"
    case .loading: "loading"
    case .success: "success"
    case .failure: "failure"
    }
    var lines = ["[\(status)\(model.isRefreshing ? ", refreshing" : "")\(model.isStale ? ", stale" : "")]"]
    guard !model.isPending, let account = model.account?.value else {
        lines += Array(repeating: "  ░░░░░░░░░░░░  ░░░░░░░░  ░░░░░░", count: 3)  // skeleton cells
        if case .failure(let reason) = model.status { lines.append("  ! \(reason)") }
        return lines.joined(separator: "\n")
    }
    lines.append("\(account.name)  $\(money(account.balance))")
    for row in model.rows {
        let transaction = row.value
        let initial = transaction.vendor.first.map(String.init) ?? "?"
        lines.append("  (\(initial)) \(transaction.vendor)  \(shortDate(transaction.date))  \(transaction.isCredit ? "+" : "-") \(money(transaction.amount))")
    }
    // A transaction that does not decode is shown as such, never dropped.
    for failure in model.failures { lines.append("  ? \(failure)") }
    if case .failure(let reason) = model.status { lines.append("  ! \(reason)") }
    return lines.joined(separator: "\n")
}

@MainActor func show(_ model: SourceModel<Source.Kind.AccountTransaction>) async {
    var shown = ""
    while true {
        // Drawn under observation, as a SwiftUI body is: a change after this wakes the loop.
        let (changed, change) = AsyncStream<Void>.makeStream()
        let now = withObservationTracking { screen(model) } onChange: { change.yield(); change.finish() }
        if now != shown { print(now); shown = now }
        switch model.status {
        case .success, .failure: if !model.isRefreshing { return }
        case .initial, .loading: break
        }
        for await _ in changed { break }
    }
}

let model = cache.model(of: "bank", as: Source.Kind.AccountTransaction.self, limit: 50)
await show(model)
