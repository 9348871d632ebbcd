import FoundationEssentials
import OfflineCache

/// Every route the server answers, declared once. A new route is a line here, a handler and an
/// in-process test (`ServeRouteTests` fails for a route without one).
extension CacheServer {
    static let routes: [Route] = [
        Route(.get, "/", "The live page to a browser (one that asks for text/html); the routes as JSON to any other client",
              answers: [Route.Answer(200, "The live page, or the routes", [("text/html", Schema.text), ("application/json", Schema.object(["routes": Schema.array(Schema.string)]))])],
              open: { LivePage.isWanted(by: $0) }) { server, request in
            LivePage.isWanted(by: request) ? LivePage.response(request) : .json(200, server.table.index, headers: [("Vary", "Accept")])
        },
        Route(.get, "/openapi.json", "This description, derived from the route table",
              answers: [Route.Answer(200, "An OpenAPI 3.1 document", [("application/json", Schema.object([:]))])]) { server, _ in
            server.table.openAPI
        },
        Route(.get, "/healthz", "200 while every source synced within its bound, else 503 with Retry-After",
              answers: [Route.Answer(200, "Healthy", [("application/json", Schema.health)]),
                        Route.Answer(503, "A source is past its bound (or a follower past --max-lag)", [("application/json", Schema.health)], headers: ["Retry-After"])]) { server, _ in
            try server.healthz()
        },
        Route(.get, "/metrics", "Every source's figures and the server's requests, in Prometheus' text format",
              answers: [Route.Answer(200, "The exposition", [("text/plain", Schema.text)])]) { server, _ in
            let several = server.settings.databasePaths.count > 1
            let parts = try server.withEveryReader { try MetricsExposition.part(of: $0, readOnly: server.settings.readOnly, several: several,
                                                                                      counting: .kept(server.censuses)) }
            let text = MetricsExposition.text(parts) + server.refresher.exposition + server.requestMetrics.exposition
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: .bytes(Array(text.utf8)))
        },
        Route(.post, "/session", "With the bearer token: a session cookie (HttpOnly, SameSite=Strict) a browser sends by itself, EventSource too",
              answers: [Route.Answer(204, "The session is open", headers: ["Set-Cookie"])]) { server, _ in
            let id = server.sessions.open()
            return HTTPResponse(status: 204, headers: [("Set-Cookie", Sessions.setCookie(id)), ("Cache-Control", "no-store")])
        },
        Route(.get, "/events", "Server-Sent Events for every source: refreshing, then updated, unchanged, failed or held",
              answers: [Route.Answer(200, "An event stream", [("text/event-stream", Schema.text)])]) { server, request in
            server.eventStream(request)
        },
        Route(.get, "/sources", "Each source as 'status --json' gives it",
              answers: [Route.Answer(200, "The sources", [("application/json", Schema.array(Schema.status))], headers: ["ETag"]),
                        Route.Answer(304, "Unchanged")]) { server, request in
            try server.sources(request)
        },
        Route(.get, "/sources/{name}", "One source as 'status --json' gives it",
              answers: [Route.Answer(200, "The source", [("application/json", Schema.status)], headers: ["ETag"]),
                        Route.Answer(304, "Unchanged")]) { server, request in
            try server.source(request, request.parameter("name"))
        },
        Route(.get, "/sources/{name}/rows", "A page of the source's rows, with how fresh they are",
              query: RowsQuery.parameters, answers: RowsQuery.answers(Schema.rows)) { server, request in
            try server.rows(request, request.parameter("name"), .json)
        },
        Route(.get, "/sources/{name}/rows.csv", "Every matching row as CSV, streamed",
              query: RowsQuery.streamParameters, answers: RowsQuery.answers(nil, type: "text/csv")) { server, request in
            try server.rows(request, request.parameter("name"), .csv)
        },
        Route(.get, "/sources/{name}/rows.ndjson", "Every matching row as JSON Lines, streamed",
              query: RowsQuery.streamParameters, answers: RowsQuery.answers(nil, type: "application/x-ndjson")) { server, request in
            try server.rows(request, request.parameter("name"), .ndjson)
        },
        Route(.get, "/sources/{name}/rows/{key}/log", "One row's versions, as 'log --json' gives them",
              answers: [Route.Answer(200, "Its versions, newest first", [("application/json", Schema.array(Schema.object([:])))])]) { server, request in
            try server.rowLog(request.parameter("name"), key: request.parameter("key"))
        },
        Route(.get, "/sources/{name}/rows/{key}", "One row (404 when there is none)",
              answers: [Route.Answer(200, "The row", [("application/json", Schema.row)], headers: ["ETag"]),
                        Route.Answer(304, "Unchanged")]) { server, request in
            try server.row(request, request.parameter("name"), key: request.parameter("key"))
        },
        Route(.get, "/sources/{name}/changes", "The changes of the runs after RUN, as 'diff --json' (without since: the latest run's)",
              query: [Route.Parameter("since", "A run's number (from 'cache history', or an event's id)", Schema.integer(minimum: 0))],
              answers: [Route.Answer(200, "The changes", [("application/json", Schema.array(Schema.object([:])))])]) { server, request in
            try server.changes(request, request.parameter("name"))
        },
        Route(.patch, "/sources/{name}/rows/{key}", "Queues a local edit of the row: a JSON merge patch (RFC 7396) of its record",
              answers: editAnswers) { server, request in
            try server.edit(request, request.parameter("name"), key: request.parameter("key"), .patch)
        },
        Route(.put, "/sources/{name}/rows/{key}", "Queues a local edit of the row: the whole record in place of it",
              answers: editAnswers) { server, request in
            try server.edit(request, request.parameter("name"), key: request.parameter("key"), .replace)
        },
        Route(.delete, "/sources/{name}/rows/{key}", "Queues the row's removal (shown pending until it applies)",
              answers: editAnswers) { server, request in
            try server.edit(request, request.parameter("name"), key: request.parameter("key"), .delete)
        },
        Route(.post, "/sources/{name}/rows", "Queues a new record (posted to the source's --create-url)",
              answers: editAnswers) { server, request in
            try server.edit(request, request.parameter("name"), key: nil, .create)
        },
        Route(.get, "/outbox", "The local edits not yet applied, oldest first, as 'outbox --json'",
              query: [Route.Parameter("source", "Only this source's edits (repeatable)")],
              answers: [Route.Answer(200, "The edits", [("application/json", Schema.array(Schema.edit))])]) { server, request in
            try server.outbox(request)
        },
        Route(.get, "/outbox/{id}", "One edit, applied or not",
              answers: [Route.Answer(200, "The edit", [("application/json", Schema.edit)])]) { server, request in
            try server.outboxEdit(request.parameter("id"))
        },
        Route(.post, "/outbox/{id}/retry", "Queues a conflict, rejected or blocked edit again, as a new request ('outbox retry')",
              answers: [Route.Answer(200, "The edit, queued", [("application/json", Schema.edit)]), decisionRefused]) { server, request in
            try server.decide(request.parameter("id")) { store, edit, source throws(CacheError) in try store.retry(edit.id, source: source) }
        },
        Route(.post, "/outbox/{id}/drop", "Drops an edit not yet applied: it is never sent ('outbox drop')",
              answers: [Route.Answer(200, "The edit, dropped", [("application/json", Schema.edit)]), decisionRefused]) { server, request in
            try server.decide(request.parameter("id")) { store, edit, source throws(CacheError) in try store.drop(edit.id, source: source) }
        },
        Route(.post, "/sources/{name}/rows/{key}/resolve", "Resolves the row's conflict: take=local sends the edit again onto the upstream's version, take=remote drops it ('outbox resolve')",
              query: [Route.Parameter("take", "Whose version wins", .object([("type", .string("string")), ("enum", .array([.string("local"), .string("remote")]))]))],
              answers: [Route.Answer(200, "The edit, queued again or dropped", [("application/json", Schema.edit)]), decisionRefused]) { server, request in
            try server.resolve(request, request.parameter("name"), key: request.parameter("key"))
        },
        Route(.post, "/sources/{name}/refresh", "Starts a sync (joining one in flight; honouring backoff and Retry-After)",
              answers: [Route.Answer(202, "Started or joined", [("application/json", Schema.object(["source": Schema.string, "refreshing": Schema.boolean]))], headers: ["Location"]),
                        Route.Answer(200, "With Prefer: wait=N, the sync's report when it ended within N seconds; or the last one, when it is recent",
                                     [("application/json", Schema.object([:]))], headers: ["Location"]),
                        Route.Answer(503, "The source backs off after failures, or the upstream asked to wait (Retry-After)", [("application/json", Schema.error)], headers: ["Retry-After"]),
                        Route.Answer(409, "A read-only server", [("application/json", Schema.error)])]) { server, request in
            try server.refresh(request, request.parameter("name"))
        },
    ]
}
