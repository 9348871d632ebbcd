import Foundation
import Synchronization
@testable import CacheCLI
@testable import OfflineCache

/// The network seam's stand-in for in-process command tests (`Sandbox.cli`): each path answers
/// what was set for it, as `HTTPClient` would hand it to the engine (a status of 400 or more
/// thrown as `.httpStatus`, a matching `ETag` as a 304), and every request is counted; `file:`
/// URLs are read as ever. For
/// tests of what a command does with an answer; where the transport is the point, the tests
/// keep the real loopback upstream (`LoopbackUpstream`).
final class CannedUpstream: Fetching {
    /// No request leaves the process: the host is never resolved.
    static let baseURL = "http://upstream.test"
    var baseURL: String { Self.baseURL }

    struct Answer: Sendable {
        var status = 200
        var body = Data()
        var etag: String?
    }

    private let state: Mutex<(answers: [String: Answer], requests: [String])>

    /// `/account` (the seed account in its envelope), `/jokes/ten` (the first ten of the
    /// project's jokes) and `/jokes/random/0` (none), as `Scripts/upstream.py` answers them.
    init() {
        state = Mutex((answers: [
            "/account": Answer(body: Self.json(["status": 200, "message": "OK", "body": Self.seedAccount])),
            "/jokes/ten": Answer(body: Self.json(Self.jokes(10))),
            "/jokes/random/0": Answer(body: Data("[]".utf8)),
        ], requests: []))
    }

    /// What `path` answers from now on.
    func answer(_ path: String, status: Int = 200, json: Any? = nil, etag: String? = nil) {
        state.withLock { $0.answers[path] = Answer(status: status, body: json.map(Self.json) ?? Data(), etag: etag) }
    }

    /// What `path` answers from now on: these bytes (a table, a broken body).
    func answer(_ path: String, status: Int = 200, body: Data) {
        state.withLock { $0.answers[path] = Answer(status: status, body: body) }
    }

    /// Every path answers `status` from now on (an outage).
    func answerEverything(status: Int) {
        state.withLock { state in
            for path in state.answers.keys { state.answers[path]?.status = status }
        }
    }

    /// The paths requested so far, in order.
    var requests: [String] { state.withLock { $0.requests } }

    func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
        // A file is read as ever: it is no network.
        if request.url.isFileURL { return try Fetcher().fetch(request) }
        let url = request.url.absoluteString
        guard url.hasPrefix(Self.baseURL) else { throw .unreachable(url: url, reason: "not a canned URL") }
        let path = String(url.dropFirst(Self.baseURL.count))
        let answer = state.withLock { state -> Answer? in
            state.requests.append(path)
            return state.answers[path]
        }
        guard let answer else { throw .httpStatus(404, url: url) }
        if answer.status >= 400 { throw .httpStatus(answer.status, url: url) }
        if let etag = answer.etag, request.etag == etag { return FetchResponse(status: 304, body: Data(), etag: etag) }
        return FetchResponse(status: answer.status, body: answer.body, etag: answer.etag)
    }

    static func json(_ value: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data()
    }

    /// `Scripts/upstream.py`'s default account.
    nonisolated(unsafe) static let seedAccount: [String: Any] = [
        "name": "Jane Appleseed",
        "currentBalance": 1234.56,
        "transactions": [
            ["type": 0, "vendor": "Payroll", "amount": 2000, "date": "2026-11-27 09:00:00"],
            ["type": 1, "vendor": "Starbucks", "amount": 7.23, "date": "2026-11-28 08:15:14"],
            ["type": 1, "vendor": "Starbucks", "amount": 7.23, "date": "2026-11-28 08:15:14"],
            ["type": 1, "vendor": "Whole Foods", "amount": 84.1, "date": "2026-11-28 18:02:40"],
            ["type": 1, "vendor": "Uber", "amount": 23.5, "date": "2026-11-29 22:41:09"],
            ["type": 0, "vendor": "Refund: Amazon", "amount": 19.99, "date": "2026-11-30 07:30:00"],
        ],
    ]

    /// The first `count` of the project's jokes, numbered from 1 as the upstream numbers them.
    static func jokes(_ count: Int) -> [[String: Any]] {
        let data = (try? Data(contentsOf: URL(fileURLWithPath: Paths.jokesFile))) ?? Data()
        let all = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] ?? []
        return all.prefix(count).enumerated().map { index, joke in joke.merging(["id": index + 1]) { $1 } }
    }
}

/// Set once the refresh has ended.
private final class Ended: Sendable {
    let flag = Atomic(false)
}

extension RefreshLauncher {
    /// The refresh a read starts, as `cache sync NAME --if-stale` runs it, on a thread of this
    /// process and fetching through `fetcher`.
    static func inProcess(fetcher: any Fetching, environment: [String: String]) -> RefreshLauncher {
        RefreshLauncher { source, databasePath in
            let done = Ended()
            Thread.detachNewThread {
                if let database = try? CacheDatabase(path: databasePath, access: .write) {
                    var options = SyncEngine.Options()
                    options.onlyIfStale = true
                    _ = try? SyncEngine(database: database, fetcher: fetcher, environment: environment).sync(source, options: options)
                }
                done.flag.store(true, ordering: .releasing)
            }
            return { done.flag.load(ordering: .acquiring) }
        }
    }
}

extension Sandbox {
    /// `cache ARGS` on the sandbox's database, in this process: the network is `upstream`'s
    /// canned answers (none without one), and the refresh a read starts runs here too.
    @discardableResult
    func cli(_ arguments: String..., upstream: CannedUpstream = CannedUpstream(), environment: [String: String] = [:]) -> RunResult {
        cli(arguments, upstream: upstream, environment: environment)
    }

    @discardableResult
    func cli(_ arguments: [String], upstream: CannedUpstream = CannedUpstream(), environment: [String: String] = [:]) -> RunResult {
        runInProcess(arguments, fetcher: upstream, environment: environment)
    }
}
