// swift-tools-version:6.0
// The README's "From Swift" example as a package of its own, depending on this project by path:
// how an app uses the library. The tests build it and run it (Tests/CacheCLITests/ExampleTests).
import PackageDescription

let package = Package(
    name: "states",
    dependencies: [.package(name: "cache", path: "../..")],
    targets: [
        .executableTarget(name: "states", dependencies: [.product(name: "OfflineCache", package: "cache")]),
    ],
    swiftLanguageModes: [.v6]
)
