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

    /// One stream behind `authenticator`, paged by the Link header, at the upstream `base`.
    static func oneStream(base: String, authenticator: String, properties: String) -> String {
        """
        type: DeclarativeSource
        streams:
          - type: DeclarativeStream
            name: items
            primary_key: id
            retriever:
              type: SimpleRetriever
              requester:
                type: HttpRequester
                url_base: "\(base)"
                path: /api/items
                request_parameters: {per_page: 100}
                authenticator:
        \(authenticator)
              record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
              paginator:
                type: DefaultPaginator
                pagination_strategy: {type: CursorPagination, cursor_value: "{{ headers['link']['next']['url'] }}"}
                page_token_option: {type: RequestPath}
        spec:
          connection_specification:
            properties:
        \(properties)
        """
    }

    /// Basic and OAuth (the refresh-token grant, the CDK's default, and client credentials) map
    /// to the options that keep each secret in a variable, and sync against the upstream that
    /// asks for them.
    @Test func basicAndOAuthAuthenticatorsMapAndSync() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let basic = """
                      type: BasicHttpAuthenticator
                      username: "{{ config['username'] }}"
                      password: "{{ config.password }}"
            """
        let oauth = """
                      type: OAuthAuthenticator
                      token_refresh_endpoint: "\(upstream.baseURL)/oauth/token"
                      client_id: "{{ config['credentials']['client_id'] }}"
                      client_secret: "{{ config['credentials']['client_secret'] }}"
                      refresh_token: "{{ config['credentials']['refresh_token'] }}"
                      scopes: [items.read, items.write]
            """
        let properties = """
                  username: {type: string, title: User}
                  password: {type: string, title: Password, airbyte_secret: true}
                  credentials:
                    type: object
                    properties:
                      client_id: {type: string, title: Client ID}
                      client_secret: {type: string, title: Client secret, airbyte_secret: true}
                      refresh_token: {type: string, title: Refresh token, airbyte_secret: true}
            """
        let clientCredentials = """
                      type: OAuthAuthenticator
                      grant_type: client_credentials
                      token_refresh_endpoint: "\(upstream.baseURL)/oauth/token"
                      client_id: "{{ config['credentials']['client_id'] }}"
                      client_secret: "{{ config['credentials']['client_secret'] }}"
            """
        for (name, authenticator) in [("basic", basic), ("oauth", oauth), ("cc", clientCredentials)] {
            let manifest = box.folder + "/\(name).yaml", file = box.folder + "/\(name).json"
            try Self.oneStream(base: upstream.baseURL, authenticator: authenticator, properties: properties)
                .write(toFile: manifest, atomically: true, encoding: .utf8)
            let imported = try await box.cache("import", "airbyte", manifest, "--prefix", name + "-")
            #expect(imported.status == 0, "\(imported.stderr)")
            try imported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try await box.cache("apply", file).status == 0)
            if name == "basic" {
                #expect(imported.stdout.contains(#""basic-user-env": "USERNAME""#) && imported.stdout.contains(#""basic-password-env": "PASSWORD""#), "\(imported.stdout)")
                #expect(imported.stderr.contains("  PASSWORD  (Password, secret)"), "\(imported.stderr)")
                try upstream.setBasic(["user": "ada", "password": "s3cret"])
                let sync = try await box.cache(["sync", "basic-items"], environment: ["USERNAME": "ada", "PASSWORD": "s3cret"])
                #expect(sync.status == 0, "\(sync.stderr)")
                try upstream.setBasic([:])
            } else if name == "cc" {
                #expect(!imported.stdout.contains("refresh-token-env") && imported.stdout.contains(#""client-id-env": "CREDENTIALS_CLIENT_ID""#), "\(imported.stdout)")
                try upstream.setOAuth(["client_id": "app-2", "client_secret": "shh-2"])
                let sync = try await box.cache(["sync", "cc-items"], environment: ["CREDENTIALS_CLIENT_ID": "app-2", "CREDENTIALS_CLIENT_SECRET": "shh-2"])
                #expect(sync.status == 0, "\(sync.stderr)")
            } else {
                #expect(imported.stdout.contains(#""refresh-token-env": "CREDENTIALS_REFRESH_TOKEN""#) && imported.stdout.contains(#""scope": "items.read items.write""#), "\(imported.stdout)")
                #expect(imported.stderr.contains("  CREDENTIALS_CLIENT_SECRET  (Client secret, secret)"), "\(imported.stderr)")
                try upstream.setOAuth(["client_id": "app", "client_secret": "shh", "refresh_token": "r-9"])
                let sync = try await box.cache(["sync", "oauth-items"], environment: [
                    "CREDENTIALS_CLIENT_ID": "app", "CREDENTIALS_CLIENT_SECRET": "shh", "CREDENTIALS_REFRESH_TOKEN": "r-9"])
                #expect(sync.status == 0, "\(sync.stderr)")
            }
            #expect(try rows(box.database, "SELECT count(*) AS n FROM records WHERE source = '\(name)-items'").first?["n"] == "300")
        }
    }

    /// `OffsetIncrement` and `PageIncrement` with a `page_size` (a setting, read as its
    /// default) sent as their option says, and stopping at a short page as the CDK does; a
    /// `DatetimeBasedCursor` whose start goes in a request parameter syncs incrementally, its
    /// watermark written in the cursor's `datetime_format`, and an end of `now_utc()` is no end.
    @Test func offsetAndPageIncrementsAndADatetimeCursorSync() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml", file = box.folder + "/sources.json"
        try """
        type: DeclarativeSource
        definitions:
          requester: {type: HttpRequester, url_base: "\(upstream.baseURL)/api"}
          selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
        streams:
          - type: DeclarativeStream
            name: by_offset
            primary_key: id
            retriever:
              type: SimpleRetriever
              requester: {$ref: "#/definitions/requester", path: offset}
              record_selector: {$ref: "#/definitions/selector"}
              paginator:
                type: DefaultPaginator
                pagination_strategy: {type: OffsetIncrement, page_size: "{{ config['page_size'] }}"}
                page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
                page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
          - type: DeclarativeStream
            name: by_page
            primary_key: id
            retriever:
              type: SimpleRetriever
              requester: {$ref: "#/definitions/requester", path: pages, request_parameters: {base: "0"}}
              record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
              paginator:
                type: DefaultPaginator
                pagination_strategy: {type: PageIncrement, page_size: 40}
                page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: size}
                page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
          - type: DeclarativeStream
            name: changed
            primary_key: id
            incremental_sync:
              type: DatetimeBasedCursor
              cursor_field: updated_at
              datetime_format: "%Y-%m-%d"
              end_datetime: "{{ now_utc().strftime('%Y-%m-%dT%H:%M:%SZ') }}"
              end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: updated_before}
              start_datetime: "{{ config['start_date'] }}"
              start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: updated_since}
            retriever:
              type: SimpleRetriever
              requester: {$ref: "#/definitions/requester", path: items}
              record_selector: {$ref: "#/definitions/selector"}
              paginator:
                type: DefaultPaginator
                pagination_strategy: {type: CursorPagination, cursor_value: "{{ headers.link.next.url }}"}
                page_token_option: {type: RequestPath}
        spec:
          connection_specification:
            properties:
              page_size: {type: integer, default: 50}
              start_date: {type: string}
        """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let imported = try await box.cache("import", "airbyte", manifest)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("the setting page_size read as its default, 50"), "\(imported.stderr)")
        let sources = try #require((try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])?["sources"] as? [[String: Any]])
        #expect(sources[0]["url"] as? String == upstream.baseURL + "/api/offset?limit=50" && sources[0]["page-size"] as? Int == 50, "\(sources[0])")
        #expect(sources[1]["first-page"] as? Int == 0 && sources[1]["next-param"] as? String == "page", "\(sources[1])")
        #expect(sources[2]["since-param"] as? String == "updated_since" && sources[2]["cursor-field"] as? String == "updated_at"
                && sources[2]["since-format"] as? String == "%Y-%m-%d", "\(sources[2])")
        #expect(imported.stderr.contains("note: DatetimeBasedCursor: the end is now, so none is sent"), "\(imported.stderr)")
        try imported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await box.cache("apply", file).status == 0)

        let sync = try await box.cache("sync", "--json")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().map { $0["inserted"] as? Int } == [300, 300, 300], "\(sync.stdout)")
        // Six full pages of 50 and an empty one: the offsets the CDK would send.
        #expect(try upstreamRequests(upstream, "/api/offset").compactMap { $0["query"] as? String }.count == 7)
        // A first page shorter than the page size is the last: no request for a second.
        try upstream.setItems(count: 30)
        let before = try upstreamRequests(upstream, "/api/offset").count
        #expect(try await box.cache("sync", "by_offset", "--accept-removals").status == 0)
        #expect(try upstreamRequests(upstream, "/api/offset").count == before + 1)
        // The next sync of the incremental stream asks for what changed since its watermark.
        #expect(try await box.cache("sync", "changed").status == 0)
        let last = try #require(try upstreamRequests(upstream, "/api/items").last?["query"] as? String)
        // The watermark (the largest updated_at, 2026-11-28T10:00:00Z) in the cursor's format.
        #expect(last.contains("updated_since=2026-11-28") && !last.contains("T10"), "\(last)")
    }

    /// Forms real manifests use, read as the CDK reads them: streams listed as references
    /// (`"#/definitions/…"`, `"*ref(definitions.…)"`), `$options` (the older `$parameters`)
    /// and `options[…]`, a URL base from `config.get('x', 'literal')` or `config['x'] or
    /// 'literal'`, a last `*` in a field path, and Basic with an API key as the user and no
    /// password.
    @Test func olderAndShorterFormsReadAsTheCDKReadsThem() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml", file = box.folder + "/sources.json"
        try """
        version: "0.29.0"
        definitions:
          requester:
            url_base: "{{ config.get('api_url', '\(upstream.baseURL)') }}"
            path: "{{ options['path'] }}"
            http_method: GET
            authenticator: {type: BasicHttpAuthenticator, username: "{{ config['api_key'] }}", password: ""}
          base_stream:
            primary_key: id
            retriever:
              requester: "*ref(definitions.requester)"
              record_selector: {extractor: {field_path: ["{{ options['records'] }}", "*"]}}
              paginator: {type: NoPagination}
          paged_stream:
            $ref: "*ref(definitions.base_stream)"
            $options: {name: paged, path: /api/paged, records: results}
          cursor_stream:
            $ref: "#/definitions/base_stream"
            $options: {name: cursor, path: /api/cursor, records: data}
            retriever:
              requester:
                $ref: "#/definitions/requester"
                url_base: "{{ config['api_url'] or '\(upstream.baseURL)' }}"
              record_selector: {extractor: {field_path: [data, items]}}
              paginator:
                type: DefaultPaginator
                pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.meta.cursor }}"}
                page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        streams:
          - "#/definitions/paged_stream"
          - "*ref(definitions.cursor_stream)"
        spec:
          connection_specification:
            properties:
              api_key: {type: string, title: API key, airbyte_secret: true}
              api_url: {type: string}
        """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let imported = try await box.cache("import", "airbyte", manifest)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("mapped   paged → source paged") && imported.stderr.contains("mapped   cursor → source cursor"), "\(imported.stderr)")
        #expect(imported.stderr.contains("note: DpathExtractor.field_path: the last * read as the records of the array at $.results"), "\(imported.stderr)")
        let sources = try #require((try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])?["sources"] as? [[String: Any]])
        #expect(sources.allSatisfy { $0["basic-user-env"] as? String == "API_KEY" && $0["basic-password-env"] == nil }, "\(sources)")
        #expect(sources.first?["url"] as? String == upstream.baseURL + "/api/paged" && sources.first?["rows"] as? String == "$.results")
        #expect(sources.last?["rows"] as? String == "$.data.items" && sources.last?["next"] as? String == "$.meta.cursor"
                && sources.last?["next-param"] as? String == "cursor", "\(sources.last ?? [:])")

        try imported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await box.cache("apply", file).status == 0)
        try upstream.setBasic(["user": "key-1", "password": ""])
        let sync = try await box.cache(["sync", "--json"], environment: ["API_KEY": "key-1"])
        #expect(sync.status == 0, "\(sync.stderr)")
        // The first page of one (no paginator), every page of the other.
        let inserted = Dictionary(uniqueKeysWithValues: try sync.jsonArray().map { ($0["source"] as? String ?? "", $0["inserted"] as? Int ?? -1) })
        #expect(inserted == ["paged": 100, "cursor": 300], "\(sync.stdout)")
    }

    /// A cursor from a response header, the last record's key while `has_more` holds
    /// (Stripe's style), a host chosen between literals by a setting's default, and an
    /// `error_handler` said to be not read: each imported, applied and synced.
    @Test func headerAndLastRecordCursorsAndAChosenHostSync() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml", file = box.folder + "/sources.json"
        try """
        type: DeclarativeSource
        definitions:
          requester:
            type: HttpRequester
            url_base: "{{ '\(upstream.baseURL)/api' if config['region'] == 'local' else 'https://api.example.com' }}"
            error_handler: {type: DefaultErrorHandler, backoff_strategies: [{type: ExponentialBackoffStrategy}]}
        streams:
          - type: DeclarativeStream
            name: by_header
            primary_key: id
            retriever:
              type: SimpleRetriever
              requester: {$ref: "#/definitions/requester", path: header-cursor}
              record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
              paginator:
                type: DefaultPaginator
                pagination_strategy: {type: CursorPagination, cursor_value: "{{ headers['X-Next-Cursor'] }}"}
                page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
          - type: DeclarativeStream
            name: customers
            primary_key: id
            retriever:
              type: SimpleRetriever
              requester: {$ref: "#/definitions/requester", path: stripe, request_parameters: {limit: "100"}}
              record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
              paginator:
                type: DefaultPaginator
                pagination_strategy:
                  type: CursorPagination
                  cursor_value: "{{ last_record['id'] }}"
                  stop_condition: "{{ not response.has_more }}"
                page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: starting_after}
        spec:
          connection_specification:
            properties:
              region: {type: string, enum: [local, us], default: local}
        """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let imported = try await box.cache("import", "airbyte", manifest)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("HttpRequester.url_base: '\(upstream.baseURL)/api', chosen by the setting region's default (local)"), "\(imported.stderr)")
        #expect(imported.stderr.contains("note: error_handler not read"), "\(imported.stderr)")
        let sources = try #require((try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])?["sources"] as? [[String: Any]])
        #expect(sources.first?["next"] as? String == "header:X-Next-Cursor" && sources.first?["next-param"] as? String == "cursor", "\(sources)")
        #expect(sources.last?["next"] as? String == "last-key" && sources.last?["has-more"] as? String == "$.has_more"
                && sources.last?["next-param"] as? String == "starting_after", "\(sources)")
        try imported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await box.cache("apply", file).status == 0)
        let sync = try await box.cache("sync", "--json")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().allSatisfy { $0["inserted"] as? Int == 300 }, "\(sync.stdout)")
        #expect(try upstreamRequests(upstream, "/api/stripe").count == 3)

        // A choice by a setting with no default cannot be made now: refused, saying so.
        try String(contentsOfFile: manifest, encoding: .utf8).replacing(", default: local", with: "").write(toFile: manifest, atomically: true, encoding: .utf8)
        let plan = try await box.cache("import", "airbyte", manifest, "--plan")
        #expect(plan.status == 0 && plan.stdout.contains("chooses by the setting region, which has no default to choose by"), "\(plan.stdout)")
    }

    /// An API key in a header or in the query (sent, as its setting's variable, on every page),
    /// a composite primary key; and each component cache cannot run refused by name.
    @Test func apiKeysMapAndWhatCannotRunIsRefusedByName() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml", file = box.folder + "/sources.json"
        let stream = { (name: String, requester: String, extra: String) in
            """
              - type: DeclarativeStream
                name: \(name)
                primary_key: [[owner, login], id]
                retriever:
                  type: SimpleRetriever
                  requester: {type: HttpRequester, url_base: "\(upstream.baseURL)", path: /api/items, \(requester)}
                  record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
            \(extra)
            """
        }
        try ([
            "type: DeclarativeSource", "streams:",
            stream("in_header", "authenticator: {type: ApiKeyAuthenticator, api_token: \"Token {{ config['api_key'] }}\", inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}}", ""),
            stream("in_query", "authenticator: {type: ApiKeyAuthenticator, api_token: \"{{ config['api_key'] }}\", inject_into: {type: RequestOption, inject_into: request_parameter, field_name: key}}", ""),
            stream("async", "http_method: GET", "").replacing("type: SimpleRetriever", with: "type: AsyncRetriever"),
            stream("posted", "http_method: POST, request_body_json: {query: all}", ""),
            stream("body_paged", "http_method: GET", """
                  paginator:
                    type: DefaultPaginator
                    pagination_strategy: {type: OffsetIncrement}
                    page_token_option: {type: RequestOption, inject_into: body_json, field_name: offset}
            """),
            stream("transformed", "http_method: GET", "    transformations: [{type: AddFields, fields: []}]"),
            stream("jinja", "request_parameters: {since: \"{{ stream_interval.start_time }}\"}", ""),
            stream("password_grant", "authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: \"https://h/token\", grant_type: password, client_id: \"{{ config['api_key'] }}\", client_secret: \"{{ config['api_key'] }}\"}", ""),
            stream("token_field", "authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: \"https://h/token\", access_token_name: token, client_id: \"{{ config['api_key'] }}\", client_secret: \"{{ config['api_key'] }}\", refresh_token: \"{{ config['api_key'] }}\"}", ""),
            "spec: {connection_specification: {properties: {api_key: {type: string, airbyte_secret: true}}}}",
        ].joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let plan = try await box.cache("import", "airbyte", manifest, "--plan", "--json")
        #expect(plan.status == 0, "\(plan.stderr)")
        let streams = try #require((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["streams"] as? [[String: Any]])
        let refused = Dictionary(uniqueKeysWithValues: streams.map { ($0["stream"] as? String ?? "", $0["refused"] as? String ?? "") })
        #expect(refused["in_header"] == "" && refused["in_query"] == "", "\(refused)")
        #expect(refused["async"]?.hasPrefix("AsyncRetriever: ") == true, "\(refused)")
        #expect(refused["posted"] == "HttpRequester: http_method POST: only GET requests are read", "\(refused)")
        #expect(refused["body_paged"]?.contains("request body (paging through a POST body)") == true, "\(refused)")
        #expect(refused["transformed"]?.hasPrefix("transformations: AddFields") == true, "\(refused)")
        #expect(refused["jinja"]?.contains("{{ stream_interval.start_time }}: Jinja beyond reading") == true, "\(refused)")
        #expect(refused["password_grant"] == "OAuthAuthenticator: grant_type 'password': cache asks with refresh_token or client_credentials", "\(refused)")
        #expect(refused["token_field"]?.hasPrefix("OAuthAuthenticator: access_token_name 'token'") == true, "\(refused)")

        let imported = try await box.cache("import", "airbyte", manifest, "--streams", "in_header,in_query")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains(#""X-Api-Key: Token ${API_KEY}""#) && imported.stdout.contains(#""key": "owner.login,id""#), "\(imported.stdout)")
        try imported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await box.cache("apply", file).status == 0)
        #expect(try await box.cache(["sync", "in_query"], environment: ["API_KEY": "k-7"]).status == 0)
        let queries = try upstreamRequests(upstream, "/api/items").compactMap { $0["query"] as? String }
        #expect(!queries.isEmpty && queries.allSatisfy { $0.contains("key=k-7") }, "\(queries)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM records WHERE source = 'in_query'").first?["n"] == "100")
        // The key, in a parameter whose name says nothing of keys, is hidden where the URL is printed.
        try upstream.control(["status": 503])
        let failed = try await box.cache(["sync", "in_query"], environment: ["API_KEY": "k-7"])
        #expect(failed.status == 75 && failed.stderr.contains("key=REDACTED") && !failed.stderr.contains("k-7"), "\(failed.stderr)")
        #expect(try rows(box.database, "SELECT error FROM sync_runs WHERE error IS NOT NULL").allSatisfy { !($0["error"] ?? "").contains("k-7") })
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
        ("nesting 100,000 deep", String(repeating: "[", count: 100_000), "nests deeper than 200 levels"),
        ("a chain of 500 references", Self.referenceChain, "refer through more than 200 others"),
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
        // Bounded: each is refused in well under a second (100,000 brackets took 18 s before
        // nesting was bounded as it is read); 5 s leaves room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(5), "\(name): \(ContinuousClock.now - started)")
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

    /// `a0` refers to `a1`, … to `a500`: as deep as nesting, without a bracket.
    static let referenceChain: String = {
        var lines = ["type: DeclarativeSource", "definitions:"]
        for index in 0..<500 { lines.append("  a\(index): [\"#/definitions/a\(index + 1)\"]") }
        lines.append("  a500: {}")
        lines.append("streams: [\"#/definitions/a0\"]")
        return lines.joined(separator: "\n") + "\n"
    }()

    /// A setting whose default is itself a variable is put in once, not read again (it looped).
    @Test func aDefaultThatNamesAVariableIsPutInOnce() async throws {
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml"
        try """
        type: DeclarativeSource
        streams:
          - {type: DeclarativeStream, name: s, primary_key: id, retriever: {type: SimpleRetriever,
             requester: {type: HttpRequester, url_base: "{{ config['host'] }}/api", path: items},
             record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}}
        spec: {connection_specification: {properties: {host: {type: string, default: "${HOST}"}}}}
        """.write(toFile: manifest, atomically: true, encoding: .utf8)
        let started = ContinuousClock.now
        let plan = try await box.cache("import", "airbyte", manifest, "--plan")
        #expect(plan.status == 0 && plan.stdout.contains("the setting host read as its default, ${HOST}"), "\(plan.stdout) \(plan.stderr)")
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    /// A file larger than a manifest can be is refused before it is parsed.
    @Test func aHugeFileIsRefusedUnread() async throws {
        let box = try Sandbox()
        let manifest = box.folder + "/manifest.yaml"
        try Data(repeating: UInt8(ascii: "#"), count: 17 << 20).write(to: URL(fileURLWithPath: manifest))
        let result = try await box.cache("import", "airbyte", manifest)
        #expect(result.status == 65 && result.stderr.contains("a manifest is at most 16 MiB; nothing was written"), "\(result.status) \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
