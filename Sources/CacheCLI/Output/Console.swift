import FoundationEssentials
import Glibc
import OfflineCache

/// Where a command writes: stdout for data, stderr for messages. Buffered, so a long listing
/// costs one write per 64 KiB rather than one per line.
final class Console {
    let stdoutIsTerminal: Bool
    let stderrIsTerminal: Bool
    var useColor: Bool
    /// Data formats (CSV, JSON) written to a terminal have upstream's control characters
    /// escaped (see TerminalSafe); into a pipe or a file the data goes as it is.
    var dataFormat: TerminalSafe.Format?
    private var outBuffer: [UInt8] = []
    private let writeOut: ([UInt8]) -> Void
    private let writeErr: ([UInt8]) -> Void

    init(stdoutIsTerminal: Bool, stderrIsTerminal: Bool = false, useColor: Bool,
         writeOut: @escaping ([UInt8]) -> Void, writeErr: @escaping ([UInt8]) -> Void) {
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.useColor = useColor
        self.writeOut = writeOut
        self.writeErr = writeErr
    }

    /// The process's own stdout and stderr.
    static func standard(environment: [String: String]) -> Console {
        let terminal = isatty(STDOUT_FILENO) == 1
        return Console(stdoutIsTerminal: terminal, stderrIsTerminal: isatty(STDERR_FILENO) == 1,
                       useColor: colors(.auto, terminal: terminal, environment: environment),
                       writeOut: { bytes in Console.writeAll(STDOUT_FILENO, bytes) },
                       writeErr: { bytes in Console.writeAll(STDERR_FILENO, bytes) })
    }

    /// Whether to colour stdout: `always`, `never`, or for `auto` a terminal without `NO_COLOR`
    /// set and not `TERM=dumb`.
    static func colors(_ choice: ColorChoice, terminal: Bool, environment: [String: String]) -> Bool {
        switch choice {
        case .always: return true
        case .never: return false
        case .auto: return terminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // a closed pipe: nothing more can be said
                }
                offset += written
            }
        }
    }

    func out(_ text: String) {
        outBuffer.append(contentsOf: text.utf8)
        if outBuffer.count >= 1 << 16 { flush() }
    }

    /// Bytes written straight into the buffer (see JSONBytes), for output by the million rows.
    func out(_ write: (inout [UInt8]) -> Void) {
        write(&outBuffer)
        if outBuffer.count >= 1 << 16 { flush() }
    }

    /// A line on stderr, after flushing stdout so the two interleave in order. A message may
    /// echo anything it was given (a source name, an option's value, a query, an upstream field
    /// name), so its controls and bidirectional overrides are shown as escapes, never obeyed;
    /// its own line breaks stay. (Terminal control goes through `errRaw`. A message that echoes
    /// text which may itself hold a line break, such as upstream's, escapes that text first, so
    /// it stays one line.)
    func err(_ line: String) {
        flush()
        let lines = line.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalSafe.escapeControl(String($0)) }
        writeErr(Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    /// Text for the terminal (status lines, cursor moves) on stderr, without a newline.
    func errRaw(_ text: String) {
        flush()
        writeErr(Array(text.utf8))
    }

    /// The terminal's height in rows, if stdout is a terminal.
    var terminalRows: Int? {
        var size = winsize()
        guard stdoutIsTerminal, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// The terminal's width in columns, if stdout is a terminal.
    var terminalColumns: Int? {
        var size = winsize()
        guard stdoutIsTerminal, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    func flush() {
        guard !outBuffer.isEmpty else { return }
        if stdoutIsTerminal, let dataFormat {
            writeOut(TerminalSafe.escaped(outBuffer, as: dataFormat))
            outBuffer.removeAll(keepingCapacity: true)
            return
        }
        writeOut(outBuffer)
        outBuffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
