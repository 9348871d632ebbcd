import Foundation

/// How large the load-scale tests run. In the suite each proves its claim at a size that takes
/// seconds; `Scripts/soak` runs the same tests at the size that once found bugs
/// (`CACHE_TEST_SCALE=soak`), as a benchmark is run: by hand, before a release, not on every
/// change.
enum TestScale {
    static let soak = ProcessInfo.processInfo.environment["CACHE_TEST_SCALE"] == "soak"

    /// `suite` in the suite, `soak` under `Scripts/soak`.
    static func pick(suite: Int, soak: Int) -> Int { Self.soak ? soak : suite }
}
