import Foundation
import Testing

/// Through the binary: a jokes body of one object with 160,000 keys (2.9 MB) syncs in seconds,
/// and a `sources add` started beside it succeeds: the decode is linear and holds no lock.
@Suite(.gated) struct WideBodyTests {
    @Test func aWideObjectSyncsWhileASourceIsAddedBesideIt() async throws {
        let box = try Sandbox()
        var text = #"{"id": 1, "type": "general", "setup": "S", "punchline": "P""#
        for key in 0..<160_000 { text += ",\"field_\(key)\": 12" }
        let file = box.folder + "/wide.json"
        try Data((text + "}").utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await box.cache("sources", "add", "wide", "--kind", "jokes", "--url", "file://" + file).status == 0)

        let sync = try box.start(["sync", "wide"])
        let add = try await box.cache("sources", "add", "beside", "--kind", "jokes", "--url", "file://" + file)
        let (synced, elapsed) = await sync.finished()
        #expect(add.status == 0, "\(add.stderr)")
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(elapsed < .seconds(10), "\(elapsed)")
        print("cache sync of a 160,000-key object: \(elapsed)")
        #expect(try await box.cache("list", "wide", "--offline", "--json").jsonArray().count == 1)
        #expect(try await box.cache("sources", "list", "--json").jsonArray().count == 2)
    }
}
