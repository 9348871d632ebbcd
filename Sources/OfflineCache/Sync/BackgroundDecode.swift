import FoundationEssentials
import Glibc
import Dispatch

/// A body decoded on a thread of its own, so the sync can read the cached rows it will compare
/// with at the same time. `result()` waits for it.
final class BackgroundDecode: @unchecked Sendable {
    /// Written once by the decoding thread before `done` is signalled; read only after.
    private var outcome: Result<Payload, UpstreamError>?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: Data, kind: SourceKind) {
        // A thread of its own rather than a pool's: the decode waits for its syntax pass,
        // which runs on the pool.
        detachThread { [self] in
            outcome = Result { () throws(UpstreamError) in try PayloadDecoder.decode(body, kind: kind) }
            done.signal()
        }
    }

    func result() -> Result<Payload, UpstreamError> {
        done.wait()
        done.signal()  // a second call returns at once
        return outcome!
    }
}
