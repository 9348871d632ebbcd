// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "cache",
    products: [
        .executable(name: "cache", targets: ["cache"]),
        .executable(name: "cache-https", targets: ["cache-https"]),
        .library(name: "OfflineCache", targets: ["OfflineCache"]),
    ],
    targets: [
        // The system's libsqlite3, found through pkg-config.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The engine: store, upstream, sync, read. Never prints, never exits.
        .target(name: "OfflineCache", dependencies: ["CSQLite"]),
        // Argument parsing, commands and output; testable without a process.
        .target(name: "CacheCLI", dependencies: ["OfflineCache"]),
        .executableTarget(name: "cache", dependencies: ["CacheCLI"]),
        // https through URLSession, in a program of its own: only it loads FoundationNetworking
        // and libcurl, so `cache` starts fast. `cache` runs it for each https request.
        .executableTarget(name: "cache-https", dependencies: ["OfflineCache"]),
        .testTarget(name: "OfflineCacheTests", dependencies: ["OfflineCache", "CSQLite"]),
        .testTarget(name: "CacheCLITests", dependencies: ["CacheCLI", "OfflineCache", "cache", "cache-https"]),
    ],
    swiftLanguageModes: [.v6]
)
