import FoundationEssentials

/// A source made whole by its kind: the mode its kind reconciles with unless it says otherwise.
/// (Here, not with `Source`, because what a kind's default is lives with the kinds.)
extension Source {
    /// A source with the kind's defaults for what is not given (`mode`: replace, but merge for jokes; the TTL: 15 minutes). `Cache.addSource` checks a source as `cache sources add` does; this initialiser checks nothing.
    package init(name: String, kind: SourceKind, url: URL, mode: SyncMode? = nil,
                ttlSeconds: Int = Source.defaultTTL, headers: [Header] = [],
                tokenEnv: String? = nil, maxBytes: Int? = nil, caCert: String? = nil, maxDelete: RemovalLimit? = nil,
                alertAfterSeconds: Int? = nil, layout: RecordLayout? = nil) {
        self.name = name
        self.kind = kind
        self.url = url
        self.mode = mode ?? kind.defaultMode
        self.ttlSeconds = ttlSeconds
        self.headers = headers
        self.tokenEnv = tokenEnv
        self.maxBytes = maxBytes
        self.caCert = caCert
        self.maxDelete = maxDelete
        self.alertAfterSeconds = alertAfterSeconds
        self.layout = layout
    }
}
