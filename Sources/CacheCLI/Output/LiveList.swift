import FoundationEssentials
import Glibc
import OfflineCache

/// The terminal view of `cache list` while a refresh runs: the preview (or pulsing skeleton
/// rows when nothing is cached), a spinner with the elapsed time on stderr, then the list
/// redrawn in place with new, changed and removed rows marked — or, if the refresh fails, the
/// preview left as it is and the reason shown.
struct LiveList {
    let source: Source
    let console: Console
    /// `--columns`, for a json source.
    let fieldChoice: [String]?
    let preview: CachedRows
    let read: () throws -> CachedRows
    /// Which of these row ids the cache still holds (a row that only left the window is not removed).
    let stillCached: (Set<String>) throws -> Set<String>
    /// Waits for the refresh, calling `tick` between looks; nil when it succeeded.
    let wait: (_ tick: (Double) throws -> Void) throws -> RefreshError?

    static let spinner = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    static let clearLine = "\r\u{1B}[K"

    func run() {
        let columns = console.terminalColumns
        let height = console.terminalRows ?? 24
        let rendering = ListRendering(color: console.useColor, columns: columns, fieldChoice: fieldChoice, keyField: source.layout?.singleKeyField)
        let skeleton = preview.count == 0
        let skeletonRows = min(6, max(1, height - 3))
        // One line is left for the spinner: the list is redrawn in place, so it must fit the screen.
        var drawn = skeleton
            ? Skeleton.lines(shape: preview, count: skeletonRows, phase: 0, columns: columns)
            : rendering.screenful(preview, height: height - 1, source: source.name)
        Interrupt.sayOnCtrlC("\(Self.clearLine)Stopped watching; the refresh of \(source.name) goes on in the background. 'cache list \(source.name)' shows it when it lands.\n")
        defer { Interrupt.restore() }
        console.out(drawn.map { $0 + "\n" }.joined())
        console.flush()

        var frame = 0
        let failure: RefreshError?
        do {
            failure = try wait { elapsed in
                frame += 1
                if skeleton && frame % 5 == 0 {
                    // Pulse: repaint the skeleton rows in the other shade.
                    drawn = Skeleton.lines(shape: preview, count: skeletonRows, phase: frame / 5, columns: columns)
                    console.errRaw(Self.clearLine + "\u{1B}[\(drawn.count)A")
                    console.out(drawn.map { "\u{1B}[K" + $0 + "\n" }.joined())
                    console.flush()
                }
                let spin = Self.spinner[frame % Self.spinner.count]
                console.errRaw(Self.clearLine + DisplayWidth.fit("\(spin) refreshing \(source.name)… \(String(cFormat: "%.1f", elapsed))s", (columns ?? 80) - 1))
            }
        } catch {
            console.errRaw(Self.clearLine)
            console.err("✗ refresh of \(source.name) could not be followed: \(error)")
            return
        }
        console.errRaw(Self.clearLine)

        if let problem = failure?.message {
            if skeleton {
                erase(drawn)
                console.err("✗ nothing cached for \(source.name), and the refresh failed: \(TerminalSafe.escapeControl(problem))")
            } else {
                console.err("✗ refresh failed: \(TerminalSafe.escapeControl(problem)) — showing cached rows\(ageText())")
            }
            return
        }
        guard let fresh = try? read() else { return }
        var changes = Cache.RowChanges.between(preview, fresh)
        changes = changes.leavingOut((try? stillCached(changes.removed)) ?? [])
        erase(drawn)
        let redrawn = ListRendering(changes: skeleton ? nil : changes, removedRows: preview.keeping(changes.removed), color: console.useColor, columns: columns, fieldChoice: fieldChoice,
                                    keyField: source.layout?.singleKeyField)
        console.out(redrawn.screenful(fresh, height: height - 1, source: source.name).map { $0 + "\n" }.joined())
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
        let columns = console.terminalColumns ?? 80
        return lines.reduce(0) { total, line in
            let width = DisplayWidth.of(line)
            return total + max(1, (width + columns - 1) / columns)
        }
    }

    private func ageText() -> String {
        guard let oldest = preview.ages.max() else { return "" }
        return " from \(DurationText.age(oldest)) ago"
    }
}

/// Ctrl-C during the live view: the spinner line cleared and a word that the refresh goes on
/// (it runs in its own session, so the signal does not reach it), then exit 130 as shells expect.
enum Interrupt {
    nonisolated(unsafe) private static var message: UnsafeMutablePointer<CChar>?

    static func sayOnCtrlC(_ text: String) {
        message = strdup(text)
        // A job started with SIGINT ignored (`cache list &` from a script) keeps it ignored.
        guard !ignored() else { return }
        signal(SIGINT) { _ in
            // Only async-signal-safe calls here: write(2) and _exit(2).
            if let message = Interrupt.message { _ = write(STDERR_FILENO, message, strlen(message)) }
            _exit(130)
        }
    }

    static func restore() {
        if !ignored() { signal(SIGINT, SIG_DFL) }
    }

    private static func ignored() -> Bool {
        var current = sigaction()
        sigaction(SIGINT, nil, &current)
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1  // SIG_IGN
    }
}
