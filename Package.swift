// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "cache",
    // Built and tested on Linux. The versions an app on an Apple platform would need (Observation,
    // Synchronization's Mutex, typed throws); the library is not yet built there (docs/library.md).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "cache", targets: ["cache"]),
        .library(name: "OfflineCache", targets: ["OfflineCache"]),
        // The URLSession transport, for an app where libcurl cannot be loaded.
        .library(name: "OfflineCacheURLSession", targets: ["OfflineCacheURLSession"]),
    ],
    targets: [
        // The system's libsqlite3, found through pkg-config.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libcurl's headers (apt: libcurl4-openssl-dev; .ci/run checks for it with pkg-config).
        // Not linked: pkg-config's `-lcurl` would make every run load libcurl and its ~30
        // libraries (4 ms); CurlShim loads libcurl.so.4 when a fetch first needs it.
        .systemLibrary(name: "CCurl"),
        // Typed wrappers for curl's variadic calls; loads libcurl.so.4 on the first fetch.
        .target(name: "CurlShim", dependencies: ["CCurl"], linkerSettings: [.linkedLibrary("dl")]),
        // GNU libmicrohttpd for `cache serve` (apt: libmicrohttpd-dev for its header). Not linked:
        // the shim loads libmicrohttpd.so.12 when `serve` starts, so no other command pays for
        // it and a machine without it runs every other command.
        .target(name: "HTTPServerShim", linkerSettings: [.linkedLibrary("dl")]),
        // libyaml's parser for `cache import` (apt: libyaml-dev for its header). Not linked: the
        // shim loads libyaml-0.so.2 when a manifest is read, so no other command loads it.
        .target(name: "YAMLShim", linkerSettings: [.linkedLibrary("dl")]),
        // The engine: store, upstream, sync, read. Never prints, never exits.
        .target(name: "OfflineCache", dependencies: ["CSQLite", "CurlShim"]),
        // A transport through URLSession (Foundation, FoundationNetworking on Linux) behind the
        // engine's `Fetching` seam. Never a dependency of the `cache` program, which stays one
        // static binary with libcurl loaded on the first fetch.
        .target(name: "OfflineCacheURLSession", dependencies: ["OfflineCache"]),
        // `cache serve`: the HTTP server over the engine, its routes testable without a socket.
        // It cannot reach the command line: the CLI depends on it, never the other way.
        // The live page it answers at `/` is carried in the binary as bytes.
        .target(name: "CacheServer", dependencies: ["OfflineCache", "HTTPServerShim"],
                resources: [.embedInCode("Live/Page/live.html")]),
        // `cache import airbyte`: connector manifests read into sources files.
        .target(name: "ConnectorImport", dependencies: ["OfflineCache", "YAMLShim"]),
        // Argument parsing, commands and output; testable without a process.
        .target(name: "CacheCLI", dependencies: ["OfflineCache", "CacheServer", "ConnectorImport"]),
        .executableTarget(name: "cache", dependencies: ["CacheCLI"]),
        // What Scripts/bench measures through the library rather than the command line
        // (queueing local edits). Not a product: nothing installs it.
        .executableTarget(name: "cache-bench", dependencies: ["OfflineCache"]),
        .testTarget(name: "OfflineCacheTests", dependencies: ["OfflineCache", "CSQLite"], exclude: ["Fixtures"]),
        .testTarget(name: "CacheCLITests", dependencies: ["CacheCLI", "CacheServer", "OfflineCache", "OfflineCacheURLSession", "cache"]),
    ],
    swiftLanguageModes: [.v6]
)
