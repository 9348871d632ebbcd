import FoundationEssentials

/// The refresh behind a read, the one implementation under both `Cache.states` and
/// `cache list`: whether a stale source is refreshed (or why not), which refresh to wait for
/// (this process's, or one already in flight), and how it ended.
///
/// The baseline of the run history is taken before the staleness check, so a sync that lands
/// in between is seen rather than missed.
package struct RefreshBehindRead {
    /// What the read does about the source's staleness.
    package enum Plan: Equatable, Sendable {
        /// Fresh, or no refresh asked for (`--offline`).
        case none
        /// Failing upstreams are left alone until their backoff ends, by readers as by cron.
        case backingOff(until: String, lastError: String?)
        /// Without its token the refresh could only fail, and its failure would set a backoff.
        /// `template`: the variable is a `${VAR}` of the URL or a header, not a token's.
        case missingToken(variable: String, template: Bool)
        /// Another process's refresh (a reader's, cron's, a person's) is in flight: wait for it.
        case join
        /// Start one.
        case start
    }

    /// How this process runs the refresh it starts.
    package enum Runner {
        /// On the calling thread, in this process: an app's refresh ends with the app.
        case inProcess(SyncEngine)
        /// In another process that outlives this one (a command that answers and exits);
        /// `start` spawns it and returns a check of whether it has ended.
        case detached(start: () throws -> () -> Bool)
    }

    /// A refresh under way, to wait for.
    package enum Started {
        /// This process ran the sync itself.
        case synced(SyncReport)
        /// Another process runs it; `hasEnded` is nil when this read did not start it.
        case elsewhere(hasEnded: (() -> Bool)?)
    }

    package let source: Source
    /// Whether the source is past its TTL (or never synced) as the read began.
    package let stale: Bool
    let database: CacheDatabase
    let watcher: RefreshWatcher

    package init(_ database: CacheDatabase, source name: String) throws {
        self.database = database
        source = try SourceStore(database).named(name)
        watcher = try RefreshWatcher(database, source: name)
        stale = try CacheReader(database).isStale(source)
    }

    /// Whether to refresh, and if not, why.
    package func plan(refresh: Bool, environment: [String: String]) throws -> Plan {
        guard refresh, stale else { return .none }
        if let backoff = try CacheReader(database).backoff(source) {
            return .backingOff(until: backoff.until, lastError: backoff.lastError)
        }
        if let variable = source.missingToken(in: environment) {
            return .missingToken(variable: variable, template: source.templateVariables.contains(variable))
        }
        return try watcher.refreshInFlight() ? .join : .start
    }

    /// Starts the refresh `plan` asks for (nothing to start for `.join`). In-process, this
    /// returns once the sync has ended.
    package func start(_ plan: Plan, runner: Runner) throws -> Started {
        guard plan == .start else { return .elsewhere(hasEnded: nil) }
        switch runner {
        case .inProcess(let engine):
            // `onlyIfStale` is checked under the source's lease, as `sync --if-stale` does for a
            // detached refresh: readers racing to refresh cause one request at most.
            var options = SyncEngine.Options()
            options.onlyIfStale = true
            return .synced(engine.sync(source, options: options))
        case .detached(let spawn):
            return .elsewhere(hasEnded: try spawn())
        }
    }

    /// Waits until the refresh has landed, or until nothing is left that could land it;
    /// nil when it succeeded, else why not.
    ///
    /// - Parameters:
    ///   - cancelled: asked between looks; true stops the wait, as a success.
    ///   - tick: called between looks with the seconds waited (a spinner's frame).
    package func wait(for started: Started, pollInterval: Double = 0.08, cancelled: () -> Bool = { false },
                      tick: (Double) throws -> Void = { _ in }) throws -> RefreshError? {
        var hasEnded: (() -> Bool)?
        var noLanding = "the refresh ended without a result"
        switch started {
        case .synced(let report) where report.outcome != .skipped:
            return report.failure.map { RefreshError(message: report.errorText ?? $0.description, failure: $0) }
        case .synced(let report):
            // Skipped under the lease: another process's refresh is in flight or just landed
            // (or, in a race, a backoff began): what it lands with is the answer.
            hasEnded = nil
            if let note = report.note { noLanding = "not refreshing: \(note)" }
        case .elsewhere(let check):
            hasEnded = check
        }
        let began = ContinuousClock.now
        // As long as a live process holds the source's lease (its own expiry bounds it), the
        // refresh is under way, however long a sync's --timeout lets it take; with no holder,
        // a process that neither takes the lease nor ends is given up on after this long.
        let limit = Duration.seconds(SyncEngine.Options().timeout + 60)
        var unheldSince = began
        var ended = hasEnded == nil
        while !cancelled() {
            if let landing = try watcher.landing() { return Self.error(landing, noLanding) }
            if !ended, let hasEnded { ended = hasEnded() }
            let held = try watcher.refreshInFlight()
            if ended, !held {
                // One last look: it may have landed as the holder left.
                return Self.error(try watcher.landing(), noLanding)
            }
            if held { unheldSince = .now } else if ContinuousClock.now - unheldSince > limit { break }
            try tick(Double((ContinuousClock.now - began) / .milliseconds(1)) / 1000)
            sleepSeconds(pollInterval)
        }
        return cancelled() ? nil : RefreshError(message: "the refresh neither took the source's lease nor ended within \(Int(limit / .seconds(1))) s")
    }

    /// What a refresh that landed (or did not) failed with; nil when it did not fail.
    static func error(_ landing: RefreshWatcher.Landing?, _ noLanding: String) -> RefreshError? {
        guard let landing else { return RefreshError(message: noLanding) }
        switch landing.outcome {
        case .failed: return RefreshError(message: landing.error ?? "unknown error")
        case .held: return RefreshError(message: landing.error ?? "held by the removal guard")
        case .updated, .unchanged, .skipped, .planned: return nil
        }
    }
}

extension RefreshBehindRead.Plan {
    /// Why a stale source is not refreshed, as a read says it; nil when it is (or need not be).
    package var reason: String? {
        switch self {
        case .backingOff(let until, let lastError):
            "not refreshing: backing off after failures; next try \(DurationText.until(until))"
                + (lastError.map { " (last error: \($0))" } ?? "")
        case .missingToken(let variable, let template):
            template ? "not refreshing: the variable \(variable), named as ${\(variable)} in the source's URL or headers, is not set in this environment"
                     : "not refreshing: the token variable \(variable) is not set in this environment"
        case .none, .join, .start:
            nil
        }
    }
}

/// Why a refresh failed, as the sync that ran it recorded it (an app sees it as
/// `CacheError.refreshFailed`).
package struct RefreshError: Error, Sendable, CustomStringConvertible {
    /// Why, in a sentence.
    package var message: String
    /// The typed failure, when this process ran the sync itself.
    package var failure: SyncReport.Failure?
    package var description: String { message }
}
