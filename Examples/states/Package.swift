// swift-tools-version:6.0
// The "From Swift" examples of docs/library.md as a package of their own, depending on this project by
// path: how an app uses the library. `states` prints a source's loading states, `account-screen`
// is the seed app's account screen driven by an observable model, and `library-check` goes past
// the first screen (typed rows, search, a row's log, a timeout, a read-only copy). The tests
// build them and run them (Tests/CacheCLITests/ExampleTests); `docc-examples` holds the DocC
// articles' code blocks, built with them so that every block compiles.
import PackageDescription

let package = Package(
    name: "states",
    dependencies: [.package(name: "cache", path: "../..")],
    targets: [
        .executableTarget(name: "states", dependencies: [.product(name: "OfflineCache", package: "cache")]),
        .executableTarget(name: "account-screen", dependencies: [.product(name: "OfflineCache", package: "cache")]),
        .executableTarget(name: "library-check", dependencies: [.product(name: "OfflineCache", package: "cache")]),
        // The DocC articles' code blocks, compiled (DocumentationTests checks they are all here).
        .executableTarget(name: "docc-examples", dependencies: [.product(name: "OfflineCache", package: "cache")]),
    ],
    swiftLanguageModes: [.v6]
)
