import CacheServer
import FoundationEssentials
import Glibc
import OfflineCache

/// `cache serve`: the command line's options in, `CacheServer` out, until SIGTERM or SIGINT,
/// which stop it accepting, let the requests in flight finish (at most `drainSeconds`) and exit
/// 0. SIGHUP is logged and ignored: nothing needs reloading, sources are read live.
enum ServeCommand {
    static let drainSeconds = 5.0

    static func run(_ options: Command.Serve, _ context: Context) throws -> Int32 {
        let console = context.console
        if let failure = HTTPServer.load() {
            console.err("cache: serve: \(failure)")
            return ExitCode.unavailable
        }
        var settings = CacheServer.Settings(databasePaths: context.databasePaths)
        if let variable = options.tokenEnv {
            guard let value = context.environment[variable], !value.isEmpty else {
                console.err("cache: serve: --token-env \(variable): the variable is not set, so no request could be let in")
                return ExitCode.configuration
            }
            settings.token = value
        }
        // The cache must be there: serving a path that holds none would answer 404 for ever. Of
        // several files, each must be, and no source in two.
        _ = try context.openEveryFile()

        // SIGTERM, SIGINT and SIGHUP are taken by this thread alone (sigwait), so every thread
        // started from here on has them blocked.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        defer { pthread_sigmask(SIG_UNBLOCK, &signals, nil) }

        settings.environment = context.environment
        settings.readOnly = context.readOnly
        settings.cors = options.cors
        settings.hostNames = options.hostNames
        settings.listenAddress = options.host
        settings.maxAge = options.maxAge
        settings.maxLag = options.maxLag
        settings.accessLog = options.accessLog ? AccessLogFormat(rawValue: options.accessLogFormat) : nil
        settings.refreshInterval = options.refreshInterval
        settings.fetcher = context.fetcher
        let app = CacheServer(settings)
        try app.events.start()
        var limits = HTTPServer.Limits()
        limits.connectionsPerClient = options.maxConnectionsPerClient
        let server: HTTPServer
        do {
            server = try HTTPServer(address: options.host, port: options.port, limits: limits, screen: { app.screen($0) },
                                    tooSlow: CacheServer.tooSlow, cutOff: { app.cutOff(peer: $0, seconds: $1) }) { app.respond(to: $0) }
        } catch {
            app.events.stop()
            console.err("cache: serve: \(error)")
            return ExitCode.unavailable
        }
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        console.out("serving http://\(host):\(server.port)\n")
        console.flush()

        var received: Int32 = 0
        while true {
            sigwait(&signals, &received)
            guard received == SIGHUP else { break }
            console.err("cache: serve: SIGHUP ignored: nothing needs reloading (sources are read as each request comes)")
        }
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
