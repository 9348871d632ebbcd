import FoundationEssentials

/// A local edit: a change made to a cached record here, shown at once (the row is pending),
/// and sent to the upstream by a push (`Cache.push`, `cache push`, every `cache sync`). The
/// outbox keeps each one with its state until it applies; nothing in it expires by itself.
///
/// ```swift
/// let edit = try cache.edit("tasks", key: "7", .patch(#"{"done": true}"#))
/// print(edit.id, edit.state)                       // …, queued
/// for sent in try cache.push("tasks") { print(sent.key, sent.state) }   // 7 applied
/// ```
public struct LocalEdit: Sendable, Equatable {
    /// A change as asked for.
    public enum Change: Sendable, Equatable {
        /// A JSON merge patch (RFC 7396) of the record: `{"done": true, "note": null}`.
        case patch(String)
        /// The whole record in place of the cached one.
        case replace(String)
        /// The record's removal.
        case delete
        /// A new record (with no key given, the upstream may number it).
        case create(String)

        var operation: Operation {
            switch self {
            case .patch: .patch
            case .replace: .replace
            case .delete: .delete
            case .create: .create
            }
        }

        var body: String? {
            switch self {
            case .patch(let body), .replace(let body), .create(let body): body
            case .delete: nil
            }
        }
    }

    /// What an edit does, as the outbox stores it.
    package enum Operation: String, Sendable, CaseIterable {
        case create, patch, replace, delete
    }

    /// Where an edit is in its life. `queued` and `inFlight` are on their way; `conflict`,
    /// `rejected` and `blocked` wait for someone (`cache outbox retry`, `drop`, `resolve`);
    /// `applied` and `dropped` are done.
    public enum Phase: String, Sendable, CaseIterable {
        /// Waiting to be sent (perhaps after a backoff).
        case queued
        /// Sent by a push that has not yet recorded the answer.
        case inFlight = "in_flight"
        /// The upstream's record changed since the edit was made: base, local and remote are kept.
        case conflict
        /// The upstream refused it (a 4xx), or it ran out of attempts: the overlay is reverted.
        case rejected
        /// Made on an edit of the same record that was rejected: not sent until retried.
        case blocked
        /// The upstream took it.
        case applied
        /// Dropped by someone: never sent again.
        case dropped

        /// Still in the outbox: not applied, not dropped.
        public var isOpen: Bool { self != .applied && self != .dropped }
    }

    /// A UUID made when the edit was made: the `Idempotency-Key` of its first request.
    public var id: String
    /// The source of the record.
    public var source: String
    /// The record's key (a record made here and numbered by the upstream has a local key,
    /// `new-…`, until the upstream's answer gives its own).
    public var key: String
    package var operation: Operation
    /// The merge patch, whole record or new record as given; nil for a removal.
    package var body: String?
    /// Where it is in its life.
    public var state: Phase
    /// Requests answered (a push killed before the answer is not an attempt).
    public var attempts: Int
    /// When it was made (ISO 8601, UTC).
    public var madeAt: String
    /// A queued edit is not sent before this (backoff, or the upstream's `Retry-After`).
    public var nextAt: String?
    /// The last answer's status (nil: none yet, or a network error).
    public var answerStatus: Int?
    /// The last answer's body, or the error.
    public var answer: String?
    /// The record the edit was made on (nil: none, or a record made here).
    public var base: String?
    /// A conflict's upstream record when it was found (nil: gone, or no conflict).
    public var remote: String?

    /// The change, as asked for.
    public var change: Change {
        switch operation {
        case .patch: .patch(body ?? "{}")
        case .replace: .replace(body ?? "{}")
        case .delete: .delete
        case .create: .create(body ?? "{}")
        }
    }

    /// What one push did.
    package struct PushReport: Sendable, Equatable {
        package var applied = 0
        package var conflicts = 0
        package var rejected = 0
        /// Still queued after this push (a retryable failure, or a backoff not yet passed).
        package var queued = 0
        /// Sources whose push stopped: the upstream refused the credentials (401/403), or they
        /// could not be read (a missing token): source → why.
        package var stopped: [String: String] = [:]
        /// What stopped each of them, for the exit status: refused credentials, a missing token,
        /// a read refused.
        package var stoppedBy: [String: UpstreamError] = [:]
        /// One line per edit sent: what happened.
        package var lines: [String] = []
        /// The ids of the edits sent, in the order their answers came.
        package var sent: [String] = []
    }
}
