import FoundationEssentials
import Glibc
import OfflineCache

/// Starts the refresh behind a read and says when it has ended: `.process` (what `cache` does),
/// or a test's, which syncs in its own process with canned responses.
struct RefreshLauncher: Sendable {
    /// Starts a refresh of `source` in the file at `databasePath`; the closure it returns tells
    /// whether that refresh has ended.
    let start: @Sendable (_ source: String, _ databasePath: String) throws -> @Sendable () -> Bool

    /// A detached `cache sync NAME --if-stale` process (`BackgroundRefresh`).
    static let process = RefreshLauncher { source, databasePath in
        let child = try BackgroundRefresh.start(source: source, databasePath: databasePath)
        return { BackgroundRefresh.hasExited(child) }
    }
}

/// Starts the refresh that a read asks for: another `cache` process running the ordinary
/// sync path, detached in its own session so it outlives the reader (and a Ctrl-C to it).
enum BackgroundRefresh {
    /// Spawns `cache --db PATH sync NAME --if-stale --quiet` and returns its pid.
    ///
    /// `--if-stale` is checked by the child under the source's lease, so readers that race
    /// to start a refresh cause one request at most: the others skip.
    static func start(source: String, databasePath: String) throws -> pid_t {
        let executable = selfExecutable()
        let arguments = [executable, "--db", databasePath, "sync", source, "--if-stale", "--quiet"]

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A new session, an empty signal mask (threads that spawn may block signals) and
        // default handlers: the child behaves like a process started from a shell.
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc), not exported to Swift
        posix_spawnattr_setflags(&attributes, Int16(setsid | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_addopen(&files, fd, "/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
        }
        // Nothing else of the reader's: an inherited pipe or terminal would keep whoever reads
        // the reader's output waiting for the refresh too.
        markInheritedDescriptorsCloseOnExec()

        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &files, &attributes, argv, environ)
        guard code == 0 else {
            throw CacheError.invalidSource("could not start a background refresh: \(String(cString: strerror(code)))")
        }
        return pid
    }

    /// Sets close-on-exec on every descriptor above stderr (the ones this process was given
    /// by its parent included). (glibc's posix_spawn_file_actions_addclosefrom_np would do
    /// this, but Swift's Glibc module does not export it.)
    private static func markInheritedDescriptorsCloseOnExec() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for entry in entries {
            guard let fd = Int32(entry), fd > STDERR_FILENO else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// This binary's own path, so the refresh runs the same version of cache.
    static func selfExecutable() -> String {
        ProgramLocation.path ?? CommandLine.arguments[0]
    }

    /// Whether our child `pid` has exited (reaping it if so).
    static func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        return result == pid || (result == -1 && errno == ECHILD)
    }
}
