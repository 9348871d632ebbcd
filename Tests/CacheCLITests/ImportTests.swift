import Foundation
import Testing

/// `cache import airbyte` (issue 57): an Airbyte declarative manifest written here, read
/// through libyaml, printed as a sources file that `cache apply` takes and `cache sync` syncs
/// against the loopback upstream; what does not map is refused with its component; bad files
/// end in a clear error with nothing written.
@Suite(.gated) struct ImportTests {
    /// A manifest in the CDK's shapes: a `$ref`ed requester and a YAML merge of it, `$parameters`
    /// handed down (a path, a records field), a Link-header paginator and a body cursor, a
    /// bearer token from a secret setting, a base URL whose only value is its spec default; and
    /// two streams that cannot map (a parent/child router, Python code).
    static func manifest(base: String) -> String {
        """
        version: 6.7.0
        type: DeclarativeSource
        definitions:
          base_requester: &base
            type: HttpRequester
            url_base: "{{ config['base_url'] }}"
            http_method: GET
            authenticator:
              type: BearerAuthenticator
              api_token: "{{ config['api_key'] }}"
          selector:
            type: RecordSelector
            extractor:
              type: DpathExtractor
              field_path: ["{{ parameters.records }}"]
        streams:
          - type: DeclarativeStream
            name: items
            primary_key: id
            $parameters:
              path: /api/items
            retriever:
              type: SimpleRetriever
              requester:
                $ref: "#/definitions/base_requester"
                path: "{{ parameters['path'] }}"
                request_parameters:
                  per_page: "50"
              record_selector:
                type: RecordSelector
                extractor: {type: DpathExtractor, field_path: []}
              paginator:
                type: DefaultPaginator
                pagination_strategy:
                  type: CursorPagination
                  cursor_value: "{{ headers['link']['next']['url'] }}"
                page_token_option: {type: RequestPath}
          - type: DeclarativeStream
            name: paged results
            primary_key: [id]
            $parameters: {records: results}
            retriever:
              type: SimpleRetriever
              requester:
                <<: *base
                path: /api/paged
              record_selector:
                $ref: "#/definitions/selector"
              paginator:
                type: DefaultPaginator
                pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
                page_token_option: {type: RequestPath}
          - type: DeclarativeStream
            name: children
            primary_key: id
            retriever:
              type: SimpleRetriever
              requester: {$ref: "#/definitions/base_requester", path: /api/children}
              record_selector: {$ref: "#/definitions/selector"}
              partition_router:
                type: SubstreamPartitionRouter
                parent_stream_configs: []
          - type: DeclarativeStream
            name: custom
            primary_key: id
            retriever:
              type: SimpleRetriever
              requester: {$ref: "#/definitions/base_requester", path: /x}
              record_selector:
                type: RecordSelector
                extractor: {type: CustomRecordExtractor, class_name: source_x.components.Extractor}
        spec:
          type: Spec
          connection_specification:
            type: object
            properties:
              api_key: {type: string, title: API Key, airbyte_secret: true}
              base_url: {type: string, title: Base URL, default: "\(base)"}
        """
    }

    @Test func aManifestIsImportedAppliedAndSynced() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml", file = box.folder + "/sources.json"
        try Self.manifest(base: upstream.baseURL).write(toFile: manifest, atomically: true, encoding: .utf8)

        let imported = try await box.cache("import", "airbyte", manifest)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("mapped   items → source items"), "\(imported.stderr)")
        #expect(imported.stderr.contains("mapped   paged results → source paged_results"), "\(imported.stderr)")
        #expect(imported.stderr.contains("refused  children: SubstreamPartitionRouter: "), "\(imported.stderr)")
        #expect(imported.stderr.contains("refused  custom: CustomRecordExtractor: a custom component is Python code"), "\(imported.stderr)")
        #expect(imported.stderr.contains("  API_KEY  (API Key, secret)"), "\(imported.stderr)")
        // The secret is a variable's name in the file, never a value; the base URL its default.
        let sources = try #require((try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])?["sources"] as? [[String: Any]])
        #expect(sources.map { $0["name"] as? String } == ["items", "paged_results"])
        #expect(sources.first?["url"] as? String == upstream.baseURL + "/api/items?per_page=50")
        #expect(sources.allSatisfy { $0["token-env"] as? String == "API_KEY" && $0["key"] as? String == "id" })
        #expect(sources.last?["rows"] as? String == "$.results" && sources.last?["next"] as? String == "$.next")
        #expect(!FileManager.default.fileExists(atPath: box.database), "import wrote a cache")

        try imported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await box.cache("apply", file).status == 0)
        let synced = try await box.cache(["sync"], environment: ["API_KEY": "the-key"])
        #expect(synced.status == 0, "\(synced.stderr)")
        // Every page of both, with the token sent as the bearer authenticator sends it.
        for name in ["items", "paged_results"] {
            #expect(try rows(box.database, "SELECT count(*) AS n FROM records WHERE source = '\(name)'").first?["n"] == "300")
        }
        let requests = try upstreamRequests(upstream, "/api/items")
        #expect(requests.count == 6, "\(requests.count) pages of 50")
        #expect(requests.allSatisfy { ($0["authorization"] as? String) == "Bearer the-key" }, "\(requests.first ?? [:])")
    }

    @Test func aPlanListsEachStreamAndTheVariablesAsJSON() async throws {
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml"
        try Self.manifest(base: "https://api.example.com/v2").write(toFile: manifest, atomically: true, encoding: .utf8)
        let plan = try await box.cache("import", "airbyte", manifest, "--plan", "--json", "--streams", "items,children", "--prefix", "acme-")
        #expect(plan.status == 0, "\(plan.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        let streams = try #require(object["streams"] as? [[String: Any]])
        #expect(streams.map { $0["stream"] as? String } == ["items", "children"])
        #expect(streams.first?["source"] as? String == "acme-items" && streams.first?["refused"] is NSNull)
        #expect(streams.last?["source"] is NSNull && (streams.last?["refused"] as? String)?.hasPrefix("SubstreamPartitionRouter: ") == true)
        let variables = try #require(object["variables"] as? [[String: Any]])
        #expect(variables.count == 1 && variables.first?["name"] as? String == "API_KEY" && variables.first?["secret"] as? Bool == true)

        let unknown = try await box.cache("import", "airbyte", manifest, "--streams", "nope")
        #expect(unknown.status == 64 && unknown.stderr.contains("no stream 'nope' in "), "\(unknown.stderr)")
    }

    /// Each bad file ends in one sentence and exit 65, bounded in time and memory, nothing written.
    @Test(arguments: [
        ("not YAML", "streams: [unclosed\n  - {", "not YAML: "),
        ("not a DeclarativeSource", "type: Spec\nconnection_specification: {}\n", "not a DeclarativeSource: its type is Spec"),
        ("no streams", "type: DeclarativeSource\nversion: 1\n", "not a DeclarativeSource: it has no list of streams"),
        ("a reference to nowhere", "type: DeclarativeSource\nstreams:\n  - $ref: \"#/definitions/missing\"\n", "the reference #/definitions/missing points nowhere"),
        ("a reference loop", "type: DeclarativeSource\ndefinitions:\n  a: {$ref: \"#/definitions/b\"}\n  b: {$ref: \"#/definitions/a\"}\nstreams:\n  - $ref: \"#/definitions/a\"\n", "refers to itself"),
        ("an alias bomb", Self.aliasBomb, "expands past 1000000 nodes"),
    ])
    func aBadFileIsRefusedAndNothingIsWritten(_ name: String, _ text: String, _ message: String) async throws {
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml"
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        let started = ContinuousClock.now
        let result = try await box.cache("import", "airbyte", manifest)
        #expect(result.status == 65, "\(name): \(result.status) \(result.stderr)")
        #expect(result.stdout.isEmpty && result.stderr.contains(message), "\(name): \(result.stderr)")
        #expect(result.stderr.hasSuffix("; nothing was written\n"), "\(result.stderr)")
        #expect(ContinuousClock.now - started < .seconds(20), "\(name)")
        #expect(!FileManager.default.fileExists(atPath: box.database))
    }

    /// "Billion laughs": nine levels of nine aliases each, 9^9 nodes once expanded.
    static let aliasBomb: String = {
        var lines = ["a0: &a0 [\"lol\"]"]
        for level in 1...9 {
            lines.append("a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 9).joined(separator: ", ") + "]")
        }
        return lines.joined(separator: "\n") + "\ntype: DeclarativeSource\nstreams: [*a9]\n"
    }()

    /// A file larger than a manifest can be is refused before it is parsed.
    @Test func aHugeFileIsRefusedUnread() async throws {
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml"
        try Data(repeating: UInt8(ascii: "#"), count: 17 << 20).write(to: URL(fileURLWithPath: manifest))
        let result = try await box.cache("import", "airbyte", manifest)
        #expect(result.status != 0 && result.stderr.contains("larger than 16 MiB"), "\(result.status) \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
