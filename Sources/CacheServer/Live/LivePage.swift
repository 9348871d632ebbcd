import FoundationEssentials
import OfflineCache

/// The live page a browser gets at `/`: one HTML file with its style and script inline
/// (`Page/live.html`, carried in the binary as bytes), reading the routes any other client
/// reads. It holds no data, so it is served without the token; the page asks for the token.
enum LivePage {
    static let bytes: [UInt8] = PackageResources.live_html
    static let etag = "\"" + BodyHash.of(Data(bytes)) + "\""

    /// Nothing from anywhere but this server, and no frame of it on another site.
    static let policy = [
        "default-src 'none'", "script-src 'unsafe-inline'", "style-src 'unsafe-inline'", "connect-src 'self'",
        "img-src 'self' data:", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    /// A browser asks for HTML; curl and scripts (`*/*`, JSON) get the routes as JSON.
    @Sendable static func isWanted(by request: HTTPRequest) -> Bool {
        (request.header("Accept") ?? "").lowercased().contains("text/html")
    }

    static func response(_ request: HTTPRequest) -> HTTPResponse {
        let headers = [
            ("ETag", etag), ("Cache-Control", "no-cache"), ("Vary", "Accept"),
            ("Content-Security-Policy", policy), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ]
        if Freshness.matches(request.header("If-None-Match"), etag) { return HTTPResponse(status: 304, headers: headers) }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")] + headers, body: .bytes(bytes))
    }
}
