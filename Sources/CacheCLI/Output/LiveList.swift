import Foundation
import OfflineCache

/// The terminal view of `cache list` while a refresh runs: the preview (or pulsing skeleton
/// rows when nothing is cached), a spinner with the elapsed time on stderr, then the list
/// redrawn in place with new, changed and removed rows marked — or, if the refresh fails, the
/// preview left as it is and the reason shown.
struct LiveList {
    let source: Source
    let console: Console
    let preview: CachedRows
    let read: () throws -> CachedRows
    let wait: (_ tick: (Double) throws -> Void) throws -> RefreshWatcher.Landing?

    static let spinner = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    static let clearLine = "\r\u{1B}[K"

    func run() {
        let rendering = ListRendering(color: console.useColor)
        let skeleton = preview.count == 0
        let skeletonRows = min(6, max(1, (console.terminalRows ?? 24) - 3))
        var drawn = skeleton
            ? Skeleton.lines(kind: source.kind, count: skeletonRows, phase: 0)
            : rendering.lines(preview)
        console.out(drawn.map { $0 + "\n" }.joined())
        console.flush()

        var frame = 0
        let landing: RefreshWatcher.Landing?
        do {
            landing = try wait { elapsed in
                frame += 1
                if skeleton && frame % 5 == 0 {
                    // Pulse: repaint the skeleton rows in the other shade.
                    drawn = Skeleton.lines(kind: source.kind, count: skeletonRows, phase: frame / 5)
                    console.errRaw(Self.clearLine + "\u{1B}[\(drawn.count)A")
                    console.out(drawn.map { "\u{1B}[K" + $0 + "\n" }.joined())
                    console.flush()
                }
                let spin = Self.spinner[frame % Self.spinner.count]
                console.errRaw(Self.clearLine + "\(spin) refreshing \(source.name)… \(String(format: "%.1f", elapsed))s")
            }
        } catch {
            console.errRaw(Self.clearLine)
            console.err("✗ refresh of \(source.name) could not be followed: \(error)")
            return
        }
        console.errRaw(Self.clearLine)

        if let problem = ListCommand.failureText(landing) {
            if skeleton {
                erase(drawn)
                console.err("✗ nothing cached for \(source.name), and the refresh failed: \(Context.escapeControl(problem))")
            } else {
                console.err("✗ refresh failed: \(Context.escapeControl(problem)) — showing cached rows\(ageText())")
            }
            return
        }
        guard let fresh = try? read() else { return }
        let changes = RowChanges.between(preview, fresh)
        erase(drawn)
        console.out(ListRendering(changes: skeleton ? nil : changes, color: console.useColor).render(fresh))
        console.flush()
        if skeleton {
            console.err("✓ \(source.name): \(fresh.count) rows")
        } else if changes.isEmpty {
            console.err("✓ \(source.name) is up to date")
        } else {
            console.err("✓ \(source.name) refreshed: \(changes.inserted.count) new, \(changes.updated.count) changed, \(changes.removed.count) removed")
        }
    }

    /// Moves the cursor up over `lines` and clears to the end of the screen; when they no
    /// longer fit on the screen, leaves them and starts below.
    private func erase(_ lines: [String]) {
        let rows = screenRows(lines)
        if let height = console.terminalRows, rows < height {
            console.errRaw("\u{1B}[\(rows)A\u{1B}[J")
        } else {
            console.out("\n")
        }
    }

    /// How many terminal rows `lines` take, wrapping included.
    private func screenRows(_ lines: [String]) -> Int {
        var size = winsize()
        let columns = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        return lines.reduce(0) { total, line in
            let width = Self.visibleWidth(line)
            return total + max(1, (width + columns - 1) / columns)
        }
    }

    /// Characters that take a column: escape sequences take none.
    static func visibleWidth(_ line: String) -> Int {
        var width = 0
        var inEscape = false
        for scalar in line.unicodeScalars {
            if inEscape {
                if (0x40...0x7E).contains(scalar.value) && scalar != "[" { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else if scalar.properties.generalCategory != .nonspacingMark {
                width += 1
            }
        }
        return width
    }

    private func ageText() -> String {
        let ages: [Int]
        switch preview {
        case .account(_, let rows): ages = rows.map(\.ageSeconds)
        case .jokes(let rows): ages = rows.map(\.ageSeconds)
        }
        guard let oldest = ages.max() else { return "" }
        return " from \(DurationText.age(oldest)) ago"
    }
}
