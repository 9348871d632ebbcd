import Foundation
import Testing

/// The human output fits the terminal at any width, measured in display columns (CJK and emoji
/// take two), through a pseudo-terminal; `Scripts/pty-capture.py` measures with Python's
/// unicodedata, not with `cache`'s own code.
@Suite(.gated) struct TerminalWidthTests {
    static let longVendor = "The Extremely Long Name Of A Vendor That Goes On And On Incorporated"
    static let cjkVendor = "東京スーパー"
    static let emojiVendor = "😀 Smiles"

    /// A `bank` source whose transactions include a long, a CJK and an emoji vendor.
    func bankWithWideVendors(_ upstream: LoopbackUpstream, _ box: Sandbox, ttl: String = "15m") throws {
        var account = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        var transactions = try #require(account["transactions"] as? [[String: Any]])
        for (index, vendor) in [Self.longVendor, Self.cjkVendor, Self.emojiVendor].enumerated() {
            transactions.append(["type": 1, "vendor": vendor, "amount": 12.5 + Double(index), "date": "2026-11-2\(index) 10:00:00"])
        }
        account["transactions"] = transactions
        try upstream.setAccount(account)
        #expect(try box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", ttl).status == 0)
        #expect(try box.cache("sync").status == 0)
    }

    @Test(arguments: [40, 120])
    func everyLineFitsAndWideCharactersAreMeasuredAsShown(_ columns: Int) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bankWithWideVendors(upstream, box)
        for environment in [["NO_COLOR": "1"], ["NO_COLOR": ""]] {
            let screen = try await box.terminal(["list", "bank"], environment: environment, columns: columns)
            #expect(screen.status == 0)
            let widest = try #require(screen.widestLine)
            #expect(widest <= columns, "\(widest) columns at \(columns): \(screen.stdout)")
            #expect(screen.stdout.contains("…"))  // the long vendor is cut
            #expect(!screen.stdout.contains(Self.longVendor))
            if columns == 120 {
                // Wide characters are not cut when they fit, and the columns line up after them.
                #expect(screen.stdout.contains(Self.cjkVendor) && screen.stdout.contains(Self.emojiVendor))
                let lines = screen.stdout.components(separatedBy: "\r\n").filter { $0.contains("Nov 2") || $0.contains("Nov 1") }
                let dateColumns = Set(lines.compactMap { line -> Int? in
                    guard let range = line.range(of: ", Nov") else { return nil }
                    return displayColumns(String(line[..<range.lowerBound]))
                })
                #expect(dateColumns.count == 1, "dates start at columns \(dateColumns)")
            }
        }
    }

    @Test func tablesFitAt40Columns() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bankWithWideVendors(upstream, box)
        for command in [["status"], ["sources", "list"], ["history"], ["diff", "bank"]] {
            let screen = try await box.terminal(command, columns: 40)
            #expect(screen.status == 0, "\(command)")
            #expect(try #require(screen.widestLine) <= 40, "\(command): \(screen.stdout)")
        }
    }

    @Test func staleRowsAndTheRedrawFitAt40Columns() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bankWithWideVendors(upstream, box)
        try age(box.database, by: 3600)
        try upstream.control(["delay": 1])
        let screen = try await box.terminal(["list", "bank"], columns: 40)
        #expect(screen.status == 0)
        #expect(screen.stdout.contains("stale"))
        #expect(screen.stdout.contains("refreshed") || screen.stdout.contains("up to date"))
        #expect(try #require(screen.widestLine) <= 40, "\(screen.stdout)")
    }

    @Test func jokesAndSkeletonRowsFitAt40Columns() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten").status == 0)
        try upstream.control(["delay": 1.5])
        let screen = try await box.terminal(["list", "jokes"], environment: ["NO_COLOR": ""], columns: 40)
        #expect(screen.status == 0)
        #expect(screen.stdout.contains("▆▆▆") && screen.stdout.contains("jokes: 10 rows"))
        #expect(try #require(screen.widestLine) <= 40, "\(screen.stdout)")
        // Six skeleton rows, each one screen row: the pulse and the erase move up over exactly six.
        #expect(screen.stdout.contains("\u{1B}[6A\u{1B}[J"))
        #expect(!screen.stdout.contains("\u{1B}[7A") && !screen.stdout.contains("\u{1B}[12A"))
    }

    /// 5,000 rows on a 24-row terminal while a refresh runs: a screenful and "… N more rows",
    /// before and after the redraw, instead of the whole list printed twice.
    @Test func aTallListShowsAScreenfulWhileItRefreshes() async throws {
        let upstream = try LoopbackUpstream(arguments: ["--transactions", "5000"])
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account",
                              "--ttl", "10m").status == 0)
        #expect(try await box.cache("sync").status == 0)
        try age(box.database, by: 3600)
        let screen = try await box.terminal(["list", "bank"], rows: 24, columns: 80)
        #expect(screen.status == 0)
        let lines = screen.stdout.components(separatedBy: "\r\n")
        #expect(lines.count < 60, "\(lines.count) lines")
        #expect(lines.filter { $0.contains("more rows: 'cache list bank --offline' prints them all") }.count == 2)
        #expect(screen.stdout.contains("4,97"))  // "… 4,97x more rows"
        #expect(try #require(screen.widestLine) <= 80)
        // Without a terminal every row is printed.
        #expect(try await box.cache("list", "bank", "--offline").stdout.split(separator: "\n").count == 5_001)
    }

    /// Ctrl-C while the live view waits: the spinner line is cleared, the refresh goes on and lands.
    @Test func ctrlCLeavesTheRefreshRunning() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        try upstream.control(["delay": 2])
        let screen = try await box.terminal(["list", "bank"], answer: "\u{03}")
        #expect(screen.status == 130, "\(screen.stdout)")
        #expect(screen.stdout.contains("\r\u{1B}[KStopped watching; the refresh of bank goes on in the background."))
        let deadline = ContinuousClock.now + .seconds(15)
        while try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] != "2" && ContinuousClock.now < deadline {
            try await pause(0.1)
        }
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] == "2")
    }
}

/// Columns by the same rule as pty-capture.py, for lines already captured.
private func displayColumns(_ text: String) -> Int {
    var width = 0
    var inEscape = false
    for scalar in text.unicodeScalars {
        if inEscape { if (0x40...0x7E).contains(scalar.value) && scalar != "[" { inEscape = false }; continue }
        if scalar == "\u{1B}" { inEscape = true; continue }
        if scalar.properties.generalCategory == .nonspacingMark || scalar.value == 0xFE0F { continue }
        width += (0x1100...0x115F).contains(scalar.value) || (0x2E80...0xA4CF).contains(scalar.value)
            || (0xAC00...0xD7A3).contains(scalar.value) || (0xFF00...0xFF60).contains(scalar.value)
            || (0x1F300...0x1FAFF).contains(scalar.value) ? 2 : 1
    }
    return width
}
