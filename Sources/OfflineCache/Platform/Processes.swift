import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// This process and others, by their ids.
package enum Processes {
    /// This process's id (`getpid`).
    package static var current: Int32 { getpid() }

    /// Whether a process with this id exists, this user's or another's (`kill` with no signal).
    package static func exists(_ pid: Int32) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || SystemError.last.isNotPermitted)
    }

    /// Whether `pid` is a running process: a zombie (dead, not yet reaped) is not. Where
    /// `/proc` cannot tell, a process that exists is taken as running.
    package static func isRunning(_ pid: Int32) -> Bool {
        guard exists(pid) else { return false }
        // /proc/PID/stat: "pid (comm) S ..." — the state follows the last ')'.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].first { $0 != " " }
        return state != "Z" && state != "X"
    }
}
