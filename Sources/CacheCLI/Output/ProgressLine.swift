import FoundationEssentials
import Glibc
import OfflineCache
import Synchronization

/// One line on a terminal's stderr that follows a long sync: bytes while the body downloads
/// (over 4 MB), rows while it reconciles (over 10,000), with rate and elapsed time. Redrawn at
/// most ten times a second, and cleared when the sync ends. Safe to call from the network thread.
final class ProgressLine: Sendable {
    private struct State {
        var lastDraw = ContinuousClock.now - .seconds(1)
        var shown = false
        /// When the current phase (download, reconcile) began: rates are per phase.
        var phaseStart = ContinuousClock.now
        var reconciling = false
    }

    private let source: String
    private let started = ContinuousClock.now
    private let state = Mutex(State())

    /// `30000` → `30,000`, the same in every locale (Foundation's `formatted()` follows it).
    static func grouped(_ value: Int) -> String {
        var digits = String(value.magnitude)
        var groups: [Substring] = []
        while digits.count > 3 {
            groups.insert(digits.suffix(3), at: 0)
            digits = String(digits.dropLast(3))
        }
        groups.insert(Substring(digits), at: 0)
        return (value < 0 ? "-" : "") + groups.joined(separator: ",")
    }

    init(source: String) { self.source = source }

    func update(_ progress: SyncProgress) {
        let elapsed = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
        let phaseElapsed = state.withLock { state -> Double in
            if case .reconciling = progress, !state.reconciling {
                state.reconciling = true
                state.phaseStart = ContinuousClock.now
            }
            return Double((ContinuousClock.now - state.phaseStart) / .milliseconds(1)) / 1000
        }
        let text: String?
        switch progress {
        case let .downloading(bytes, total):
            guard max(bytes, total ?? 0) > 4 << 20 else { return }
            let of = total.map { " of \(Self.megabytes($0))" } ?? ""
            text = "⇣ \(source)  \(Self.megabytes(bytes))\(of)  \(Self.megabytes(Int(Double(bytes) / max(phaseElapsed, 0.001))))/s  \(String(cFormat: "%.1f", elapsed))s"
        case let .reconciling(rows, total):
            guard total > 10_000 else { return }
            let rate = Int(Double(rows) / max(phaseElapsed, 0.001))
            text = "⟳ \(source)  reconciling \(Self.grouped(rows)) of \(Self.grouped(total)) rows  \(Self.grouped(rate)) rows/s  \(String(cFormat: "%.1f", elapsed))s"
        case .finished:
            text = nil
        }
        state.withLock { state in
            if let text {
                guard ContinuousClock.now - state.lastDraw >= .milliseconds(100) else { return }
                state.lastDraw = ContinuousClock.now
                state.shown = true
                Self.write("\r\u{1B}[K" + text)
            } else if state.shown {
                state.shown = false
                Self.write("\r\u{1B}[K")
            }
        }
    }

    private static func megabytes(_ bytes: Int) -> String {
        String(cFormat: "%.1f MB", Double(bytes) / 1_000_000)
    }

    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
