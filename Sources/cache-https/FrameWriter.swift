import Foundation
import OfflineCache

/// Writes HTTPSWire frames to `cache`, whole and in order, from any thread.
final class FrameWriter: Sendable {
    private let fd: Int32
    private let lock = NSLock()

    init(fd: Int32) { self.fd = fd }

    func write(_ kind: HTTPSWire.Kind, _ payload: Data = Data()) {
        let frame = HTTPSWire.encode(kind, payload)
        lock.lock()
        defer { lock.unlock() }
        frame.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let written = Foundation.write(fd, raw.baseAddress! + sent, raw.count - sent)
                if written < 0 && errno == EINTR { continue }
                // cache has stopped listening (it gave up, or died): nothing left to do.
                guard written > 0 else { exit(0) }
                sent += written
            }
        }
    }
}
