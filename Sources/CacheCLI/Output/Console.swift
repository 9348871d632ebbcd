import Foundation

/// Where a command writes: stdout for data, stderr for messages. Buffered, so a long listing
/// costs one write per 64 KiB rather than one per line.
final class Console {
    let stdoutIsTerminal: Bool
    let stderrIsTerminal: Bool
    let useColor: Bool
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
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty || environment["TERM"] == "dumb"
        return Console(stdoutIsTerminal: terminal, stderrIsTerminal: isatty(STDERR_FILENO) == 1,
                       useColor: terminal && !noColor,
                       writeOut: { bytes in Console.writeAll(STDOUT_FILENO, bytes) },
                       writeErr: { bytes in Console.writeAll(STDERR_FILENO, bytes) })
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

    /// A line on stderr, after flushing stdout so the two interleave in order.
    func err(_ line: String) {
        flush()
        writeErr(Array((line + "\n").utf8))
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

    func flush() {
        guard !outBuffer.isEmpty else { return }
        writeOut(outBuffer)
        outBuffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
