import OfflineCache

/// The man page, `cache.1`, made from `CommandTable`: `cache manpage > cache.1`.
enum ManPage {
    static func render() -> String {
        let top = CommandTable.spec("")
        var page = """
        .TH CACHE 1 "" "cache \(CacheVersion.string)" "User Commands"
        .SH NAME
        cache \\- \(escape(lowercasedFirst(top.overview)))
        .SH SYNOPSIS
        .B cache
        \(escape(String(top.usage.dropFirst("cache ".count))))
        .SH DESCRIPTION
        \(escape(top.overview))
        Each source is fetched, validated whole and reconciled into one SQLite file in one
        transaction; bad data never replaces good data. Reads print what is cached at once, each
        row flagged stale when upstream has not confirmed it within the source's TTL, and start a
        background refresh. Durations are written 90, 90s, 15m, 2h, 1d or 1h30m.
        .SH GLOBAL OPTIONS

        """
        for option in CommandTable.globalOptions + [CommandTable.versionOption, CommandTable.helpOption] {
            page += item(option)
        }
        page += ".SH COMMANDS\n"
        for spec in CommandTable.commands where !spec.name.isEmpty && spec.subcommands.isEmpty {
            page += ".SS \"\(escape(spec.usage))\"\n\(escape(spec.overview))\n"
            for argument in spec.arguments {
                page += ".TP\n.I \(escape(argument.label))\n\(escape(argument.help))\n"
            }
            for option in spec.options { page += item(option) }
            for example in spec.examples {
                page += ".PP\n.RS\n.nf\n\(escape(example))\n.fi\n.RE\n"
            }
        }
        page += """
        .SH EXIT STATUS
        .TP
        .B 0
        Success, including cached rows served stale.
        .TP
        .B 1
        status \\-\\-max\\-age: a source has not synced successfully within its age.
        .TP
        .B 64
        Bad usage.
        .TP
        .B 65
        Upstream sent data that is not what its kind promises; a sync held by the removal guard.
        .TP
        .B 66
        No such source, run or file, or no database yet.
        .TP
        .B 69
        Upstream unreachable with nothing cached; a TLS failure.
        .TP
        .B 73
        The database or its folder cannot be created.
        .TP
        .B 74
        An I/O error or a damaged database.
        .TP
        .B 75
        A temporary failure: a timeout, HTTP 408, 429 or 5xx, a truncated body; try again.
        .TP
        .B 77
        HTTP 401 or 403, or permission denied on the database.
        .TP
        .B 78
        A configuration error: an unsafe URL scheme, a missing token variable, a newer database.
        .SH ENVIRONMENT
        .TP
        .B CACHE_DB
        The database, unless \\-\\-db is given.
        .TP
        .B XDG_CACHE_HOME
        The database is $XDG_CACHE_HOME/cache/cache.sqlite3 when CACHE_DB is not set.
        .TP
        .B NO_COLOR
        Plain text on a terminal, with \\-\\-color auto.
        .TP
        .B http_proxy, https_proxy, no_proxy
        Proxies, as curl reads them.
        .SH FILES
        .TP
        .I ~/.cache/cache/cache.sqlite3
        The database by default.
        .TP
        .I ~/.config/cache/tokens.env
        Token variables for sources added with \\-\\-token\\-env, read by the systemd unit and the crontab line.
        .SH SEE ALSO
        .BR sqlite3 (1),
        .BR curl (1)

        """
        return page
    }

    private static func item(_ option: OptionSpec) -> String {
        let value = option.value.map { option.valueIsOptional ? "[=\\fI<\(escape($0))>\\fR]" : " \\fI<\(escape($0))>\\fR" } ?? ""
        let names = [option.short, option.name].compactMap { $0 }.map { "\\fB\(escape($0))\\fR" }.joined(separator: ", ")
        return ".TP\n\(names)\(value)\n\(escape(option.help))\n"
    }

    private static func lowercasedFirst(_ text: String) -> String {
        text.prefix(1).lowercased() + text.dropFirst()
    }

    /// Text as roff reads it: backslashes, hyphens and non-ASCII escaped, no line starting with a control character.
    static func escape(_ text: String) -> String {
        // Non-ASCII as groff's named Unicode escapes (\[u2026]): troff reads its input as Latin-1.
        let escaped = text.replacingScalars { scalar in
            if scalar == "\\" { return "\\e" }
            if scalar == "-" { return "\\-" }
            guard scalar.isASCII else { return "\\[u" + String(cFormat: "%04X", scalar.value) + "]" }
            return nil
        }
        return escaped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }
}
