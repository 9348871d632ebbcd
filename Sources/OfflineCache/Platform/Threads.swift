#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts `body` on a new joinable thread (Foundation's `Thread` without Foundation).
private func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    let code = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, Unmanaged.passRetained(Box(body)).toOpaque())
    precondition(code == 0, "pthread_create failed: \(code)")
    return thread
}

/// Runs `body` on a new detached thread.
package func detachThread(_ body: @escaping @Sendable () -> Void) {
    pthread_detach(startThread(body))
}

/// Runs `work` on a new thread, then `finished` once that thread has ended: joined, with its
/// thread-local clean-up done (OpenSSL keeps per-thread state that a thread's exit releases).
/// A stream that finishes only then cannot let its app reach `exit()`, and libcurl's and
/// OpenSSL's clean-up there, while its worker is still inside them.
package func runThenJoin(_ work: @escaping @Sendable () -> Void, finished: @escaping @Sendable () -> Void) {
    let worker = UncheckedThread(startThread(work))
    detachThread {
        pthread_join(worker.thread, nil)
        finished()
    }
}

/// A thread that whoever started it waits for (`join`, once) before what it reads goes away.
package struct JoinedThread: @unchecked Sendable {
    private let thread: pthread_t

    package init(_ body: @escaping @Sendable () -> Void) {
        thread = startThread(body)
    }

    package func join() {
        pthread_join(thread, nil)
    }
}

/// A thread handle handed to the one thread that joins it.
private struct UncheckedThread: @unchecked Sendable {
    let thread: pthread_t
    init(_ thread: pthread_t) { self.thread = thread }
}

/// Sleeps the calling thread for `seconds` (fractions included).
package func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// A mutex with a condition variable (Foundation's `NSCondition` without Foundation).
package final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
    /// Waits for a signal or a broadcast; the lock must be held, and is held again on return.
    package func wait() { pthread_cond_wait(condition, mutex) }
    package func broadcast() { pthread_cond_broadcast(condition) }
    /// Wakes one waiter.
    package func signal() { pthread_cond_signal(condition) }
}

/// A value guarded by a plain pthread mutex. Under contention it costs far less than the
/// standard library's `Mutex`, whose priority-inheriting futex enters the kernel on every
/// contended lock: the request threads of `cache serve` meet at its locks (the figures are in
/// docs/performance.md, "Locks that stay out of the kernel").
package final class Locked<Value>: @unchecked Sendable {
    private var value_: Value
    private let lock = Condition()
    package init(_ value: Value) { value_ = value }
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value_)
    }
    package var value: Value { withLock { $0 } }
}

/// The process's environment, read from `environ` (ProcessInfo's getter costs a quarter of a
/// millisecond of start-up in runtime type lookups).
public func processEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
        if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
            environment[String(decoding: bytes[..<equals], as: UTF8.self)] = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
        }
        entry += 1
    }
    return environment
}
