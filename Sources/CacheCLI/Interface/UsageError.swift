/// A command line that cannot be run as written. Exit code 64.
struct UsageError: Error, Equatable {
    /// The sentence after `cache: `.
    var message: String
    /// The command whose usage line and help are named, such as `sync` or `sources add`.
    var command: String?
}
