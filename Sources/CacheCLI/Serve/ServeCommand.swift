import FoundationEssentials
import Glibc
import OfflineCache

/// `cache serve`: the cache over HTTP until SIGTERM or SIGINT, which stop it accepting, let
/// the requests in flight finish (at most `drainSeconds`) and exit 0.
enum ServeCommand {
    static let drainSeconds = 5.0

    static func run(_ options: Command.Serve, _ context: Context) throws -> Int32 {
        let console = context.console
        if let failure = HTTPServer.load() {
            console.err("cache: serve: \(failure)")
            return ExitCode.unavailable
        }
        var token: String?
        if let variable = options.tokenEnv {
            guard let value = context.environment[variable], !value.isEmpty else {
                console.err("cache: serve: --token-env \(variable): the variable is not set, so no request could be let in")
                return ExitCode.configuration
            }
            token = value
        }
        // The cache must be there: serving a path that holds none would answer 404 for ever. Of
        // several files, each must be, and no source in two.
        _ = try context.openEveryFile()

        // SIGTERM and SIGINT are taken by this thread alone (sigwait), so every thread started
        // from here on has them blocked.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        defer { pthread_sigmask(SIG_UNBLOCK, &signals, nil) }

        let app = CacheServer(CacheServer.Settings(
            databasePaths: context.databasePaths, environment: context.environment, readOnly: context.readOnly,
            token: token, cors: options.cors, maxAge: options.maxAge, maxLag: options.maxLag, accessLog: options.accessLog,
            fetcher: context.fetcher))
        try app.events.start()
        let server: HTTPServer
        do {
            server = try HTTPServer(address: options.host, port: options.port) { app.handle($0) }
        } catch {
            app.events.stop()
            console.err("cache: serve: \(error)")
            return ExitCode.unavailable
        }
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        console.out("serving http://\(host):\(server.port)\n")
        console.flush()

        var received: Int32 = 0
        sigwait(&signals, &received)
        // Stop taking connections, end the event streams, then let what is in flight finish; a
        // `Prefer: wait` still waiting half a second before the end is answered 202 instead.
        server.quiesce()
        app.events.stop()
        let deadline = ContinuousClock.now + .milliseconds(Int64(drainSeconds * 1000))
        while server.openConnections > 0, ContinuousClock.now < deadline - .milliseconds(500) { usleep(20_000) }
        app.refresher.stop()
        while server.openConnections > 0, ContinuousClock.now < deadline { usleep(20_000) }
        server.stop()
        return ExitCode.success
    }
}
