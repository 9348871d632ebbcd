import FoundationEssentials
import Glibc
import OfflineCache

/// Where a command writes: stdout for data, stderr for messages. Buffered, so a long listing
/// costs one write per 64 KiB rather than one per line. Every write is checked here: the first
/// that fails (a full disk, an I/O error) is kept in `lostOutput`, and the command's exit says
/// so (`CLI.run`); a closed pipe is a reader that has read enough, and ends quietly.
final class Console {
    /// A write that failed: which stream, and the `errno` it failed with.
    struct LostOutput: Equatable {
        let stream: String
        let errno: Int32

        /// `cannot write to stdout: No space left on device`.
        var message: String { "cannot write to \(stream): " + String(cString: strerror(errno)) }
    }

    let stdoutIsTerminal: Bool
    let stderrIsTerminal: Bool
    var useColor: Bool
    /// Data formats (CSV, JSON) written to a terminal have upstream's control characters
    /// escaped (see TerminalSafe); into a pipe or a file the data goes as it is.
    var dataFormat: TerminalSafe.Format?
    /// The first write that failed, if one did; later output to that stream is dropped rather
    /// than tried again (the other stream still says why).
    private(set) var lostOutput: LostOutput?
    private var outBuffer: [UInt8] = []
    /// Each writes all the bytes it is given, or returns the `errno` it stopped at.
    private let writeOut: ([UInt8]) -> Int32?
    private let writeErr: ([UInt8]) -> Int32?

    init(stdoutIsTerminal: Bool, stderrIsTerminal: Bool = false, useColor: Bool,
         writeOut: @escaping ([UInt8]) -> Int32?, writeErr: @escaping ([UInt8]) -> Int32?) {
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

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
    }

    /// Hands `bytes` to `write` unless a write already failed, keeping the first failure (a
    /// closed pipe aside: its reader has read enough, and nothing more can be said).
    private func send(_ bytes: [UInt8], _ stream: String, _ write: ([UInt8]) -> Int32?) {
        guard lostOutput?.stream != stream, let failure = write(bytes), failure != EPIPE else { return }
        if lostOutput == nil { lostOutput = LostOutput(stream: stream, errno: failure) }
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
        send(Array((lines.joined(separator: "\n") + "\n").utf8), "stderr", writeErr)
    }

    /// Text for the terminal (status lines, cursor moves) on stderr, without a newline.
    func errRaw(_ text: String) {
        flush()
        send(Array(text.utf8), "stderr", writeErr)
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
            send(TerminalSafe.escaped(outBuffer, as: dataFormat), "stdout", writeOut)
            outBuffer.removeAll(keepingCapacity: true)
            return
        }
        send(outBuffer, "stdout", writeOut)
        outBuffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
