import Foundation
import Testing
@testable import CacheCLI
@testable import OfflineCache

extension Sandbox {
    /// Runs `cache ARGS` on the sandbox's database inside this process (`CLI.run` with a
    /// console that captures both streams), on the real network (loopback upstreams, files):
    /// for checks of what a command says and does where the process itself is not the point.
    /// No terminal, no colour; a refresh a read starts runs in this process too.
    func cacheInProcess(_ arguments: [String], environment: [String: String] = [:]) -> RunResult {
        runInProcess(arguments, fetcher: Fetcher(), environment: environment)
    }

    /// `cacheInProcess` on `fetcher`'s answers (see `Sandbox.cli`).
    /// `stdoutFails`: every write to stdout fails with this `errno` (a full disk, a closed pipe).
    func runInProcess(_ arguments: [String], fetcher: any Fetching, environment: [String: String],
                      stdoutFails: Int32? = nil) -> RunResult {
        var out: [UInt8] = []
        var err: [UInt8] = []
        let console = Console(stdoutIsTerminal: false, useColor: false,
                              writeOut: { bytes in if let stdoutFails { return stdoutFails }; out += bytes; return nil },
                              writeErr: { err += $0; return nil })
        let environment = ["CACHE_DB": database].merging(environment) { $1 }
        let status = CLI.run(arguments: arguments, environment: environment, console: console,
                             fetcher: fetcher, refreshLauncher: .inProcess(fetcher: fetcher, environment: environment))
        console.flush()
        return RunResult(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    /// A json source `name` reading `body` from a file of the sandbox (a `file:` URL), keyed by
    /// `id`, added and synced in-process; the file's path, to write the next version into.
    @discardableResult
    func syncedFileSource(_ name: String, _ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let file = folder + "/\(name).json"
        try Data(body.utf8).write(to: URL(fileURLWithPath: file))
        #expect(cacheInProcess(["sources", "add", name, "--kind", "json", "--key", "id", "--url", "file://" + file]).status == 0,
                sourceLocation: sourceLocation)
        #expect(cacheInProcess(["sync", name]).status == 0, sourceLocation: sourceLocation)
        return file
    }
}
