/// A command line that cannot be run as written. Exit code 64.
struct UsageError: Error, Equatable {
    /// The sentence after `Error: `.
    var message: String
    /// The command whose usage line and help are named, such as `sync` or `sources add`.
    var command: String?
}

/// Help text for one command, laid out the way swift-argument-parser users know.
struct CommandHelp {
    var name: String            // "sync", "sources add", or "" for the top level
    var overview: String
    var usage: String
    var arguments: [(String, String)] = []
    var options: [(String, String)] = []
    var subcommands: [(String, String)] = []
    var examples: [String] = []

    func render() -> String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n"
        func section(_ title: String, _ rows: [(String, String)]) {
            guard !rows.isEmpty else { return }
            text += "\n\(title):\n"
            let width = min(rows.map(\.0.count).max() ?? 0, 28)
            for (left, right) in rows {
                let pad = left.count < width ? String(repeating: " ", count: width - left.count) : ""
                text += left.count > width ? "  \(left)\n  \(String(repeating: " ", count: width))  \(right)\n"
                                           : "  \(left)\(pad)  \(right)\n"
            }
        }
        section("ARGUMENTS", arguments)
        section("OPTIONS", options + [("-h, --help", "Show help information.")])
        section("SUBCOMMANDS", subcommands)
        if !examples.isEmpty {
            text += "\nEXAMPLES:\n" + examples.map { "  \($0)\n" }.joined()
        }
        if !subcommands.isEmpty {
            text += "\n  See 'cache help <subcommand>' for detailed help.\n"
        }
        return text
    }
}
