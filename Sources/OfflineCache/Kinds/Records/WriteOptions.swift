import FoundationEssentials

/// The options that make a record source writable (see `SourceOption`): where a change of one
/// record goes, where a new record is posted, how a change is sent, whether a change checks that
/// nobody changed the record first, and how often and how long an edit is tried. `cache edit`
/// queues edits for these; `cache push` sends them (`Outbox/`).
extension SourceOption {
    /// `--write-url`: The URL of one record, with {key} where its key goes.
    package static let writeURL = SourceOption(
        "write-url", "template", help: "where one record is changed or deleted: a URL with {key} where its key goes (https://api.example/items/{key}).",
        listed: { [("write_url", .optional($0.writing.recordURL))] },
        text: { $0.writing.recordURL.map { [$0] } }, show: { $0.writing.recordURL ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        let text = given.value
        guard text.contains(Source.Writing.keyPlaceholder) else {
            throw invalid(text, "--write-url", "a URL with {key} where a record's key goes, such as https://api.example/items/{key}")
        }
        if given.isNew { _ = try SourceRules.url(text.replacing(Source.Writing.keyPlaceholder, with: "KEY")).get() }
        source.writing.recordURL = text
    }

    /// `--create-url`: Where a new record is posted.
    package static let createURL = SourceOption(
        "create-url", "url", help: "where a new record is posted ('cache edit NAME --create').",
        listed: { [("create_url", .optional($0.writing.createURL))] },
        text: { $0.writing.createURL.map { [$0] } }, show: { $0.writing.createURL ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        if given.isNew { _ = try SourceRules.url(given.value).get() }
        source.writing.createURL = given.value
    }

    /// `--write-method`: How a change is sent.
    package static let writeMethod = SourceOption(
        "write-method", "put|patch", help: "how a change is sent: put (the whole record) or patch (a JSON merge patch, RFC 7396; the default).",
        choices: Source.WriteMethod.allCases.map(\.rawValue), listed: { [("write_method", .string($0.writing.method.rawValue))] },
        text: { $0.writing.method == .patch ? nil : [$0.writing.method.rawValue] }, show: { $0.writing.method.rawValue }
    ) { source, given throws(SourceRules.Problem) in
        guard let method = Source.WriteMethod(rawValue: given.value) else { throw invalid(given.value, "--write-method", "put or patch") }
        source.writing.method = method
    }

    /// `--conflict-check`: Whether a change first checks that the record is still the one edited.
    package static let conflictCheck = SourceOption(
        "conflict-check", "if-match|none",
        help: "if-match (the default): a change is sent only onto the version it was made on (If-Match, or a read first), else it is a conflict; none: the last write wins.",
        choices: Source.ConflictCheck.allCases.map(\.rawValue), listed: { [("conflict_check", .string($0.writing.conflictCheck.rawValue))] },
        text: { $0.writing.conflictCheck == .ifMatch ? nil : [$0.writing.conflictCheck.rawValue] }, show: { $0.writing.conflictCheck.rawValue }
    ) { source, given throws(SourceRules.Problem) in
        guard let check = Source.ConflictCheck(rawValue: given.value) else { throw invalid(given.value, "--conflict-check", "if-match or none") }
        source.writing.conflictCheck = check
    }

    /// `--push-attempts`: How many times an edit is sent before it is rejected.
    package static let pushAttempts = SourceOption(
        "push-attempts", "n", help: "how many times an edit is sent (retries after 5xx, 429 or network errors) before it is rejected (default: \(Source.Writing.defaultAttempts)).",
        listed: { [("push_attempts", .int($0.writing.attempts))] },
        text: { $0.writing.attempts == Source.Writing.defaultAttempts ? nil : [String($0.writing.attempts)] }, show: { String($0.writing.attempts) }
    ) { source, given throws(SourceRules.Problem) in
        guard let value = Int(given.value), (1...1000).contains(value) else { throw invalid(given.value, "--push-attempts", "a number from 1 to 1000") }
        source.writing.attempts = value
    }

    /// `--push-max-age`: How long an edit may keep failing before it is rejected.
    package static let pushMaxAge = SourceOption(
        "push-max-age", "duration",
        help: "how long after it was made an edit may still be retried: one older than this that the upstream answers with a failure that may pass (5xx, 429) is rejected, with the reason; offline, it waits (default, or 'none': no limit; --push-attempts still applies).",
        listed: { [("push_max_age_s", .optional($0.writing.maxAgeSeconds))] },
        text: { $0.writing.maxAgeSeconds.map { [DurationText.format($0)] } }, show: { $0.writing.maxAgeSeconds.map(DurationText.format) ?? "none" }
    ) { source, given throws(SourceRules.Problem) in
        source.writing.maxAgeSeconds = given.value == "none" ? nil : try duration(given, "--push-max-age")
    }

    /// The write options, for every kind that keeps records.
    static let writing: [SourceOption] = [writeURL, createURL, writeMethod, conflictCheck, pushAttempts, pushMaxAge]
}

extension Source {
    /// How a change is sent to the upstream.
    package enum WriteMethod: String, Sendable, CaseIterable {
        /// The whole record, as the cache shows it after the edit.
        case put
        /// A JSON merge patch (RFC 7396).
        case patch
    }

    /// Whether a change checks that the upstream's record is still the version it was made on.
    package enum ConflictCheck: String, Sendable, CaseIterable {
        case ifMatch = "if-match"
        case none
    }

    /// Where and how the source's records are written (`--write-url`, `--create-url`, …).
    package struct Writing: Sendable, Equatable {
        /// What `--write-url` holds where a record's key goes.
        package static let keyPlaceholder = "{key}"
        package static let defaultAttempts = 10

        /// `--write-url`: a URL template with `{key}`.
        package var recordURL: String?
        /// `--create-url`.
        package var createURL: String?
        package var method = WriteMethod.patch
        package var conflictCheck = ConflictCheck.ifMatch
        package var attempts = Writing.defaultAttempts
        /// `--push-max-age`: an edit older than this is not retried after a failure.
        package var maxAgeSeconds: Int?

        /// The URL of the record `key`, its key percent-encoded as one path segment.
        func url(of key: String) -> String? {
            recordURL?.replacing(Self.keyPlaceholder, with: Self.pathSegment(key))
        }

        /// `text` percent-encoded as one path segment (RFC 3986 §3.3): unreserved characters and
        /// sub-delimiters as they are, every other byte of its UTF-8 as `%XX`.
        static func pathSegment(_ text: String) -> String {
            let kept = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@".utf8)
            let hex = Array("0123456789ABCDEF".utf8)
            var out: [UInt8] = []
            for byte in text.utf8 {
                if kept.contains(byte) { out.append(byte) } else { out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
