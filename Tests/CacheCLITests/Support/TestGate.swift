import Foundation
import Testing

/// With `CACHE_TEST_TIMINGS=FILE`, each gated test appends a line "SECONDS STARTED QUEUED NAME"
/// to FILE: its time from when it passed the gate (where the suite's time goes, free of the time
/// spent queued), when that was, in seconds from the first test's start, and how long it had
/// waited at the gate.
enum TestTimings {
    static let file = ProcessInfo.processInfo.environment["CACHE_TEST_TIMINGS"]
    static let origin = ContinuousClock.now
    private static let lock = NSLock()

    static func record(_ name: String, arrived: ContinuousClock.Instant, entered: ContinuousClock.Instant) {
        guard let file else { return }
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let line = String(format: "%.3f %.3f %.3f %@\n", seconds(ContinuousClock.now - entered), seconds(entered - origin),
                          seconds(entered - arrived), name)
        lock.withLock {
            guard let handle = FileHandle(forWritingAtPath: file) ?? {
                _ = FileManager.default.createFile(atPath: file, contents: nil)
                return FileHandle(forWritingAtPath: file)
            }() else { return }
            handle.seekToEndOfFile()
            handle.write(Data(line.utf8))
            handle.closeFile()
        }
    }
}

/// At most five of the command-line tests at once. They are `async` and wait for their
/// processes off the test runner's threads, so without a limit every one of them would start
/// at once: hundreds of processes on two cores, and timing checks measuring the crowd. (The
/// engine's synchronous tests run one at a time beside them, `.computing`, on the runner's own
/// two threads; these run on `TestThreads`.) Five: most of these tests spend part of their time
/// waiting for a process, an answer or a timeout. With three the two cores were busy 1.5 of 2
/// (the suite 142 s against 126 s with four); on `TestThreads`, four took 92 s, five 86 s and
/// six 88 s.
///
/// Tests that mostly wait (a browser's page, Litestream's intervals, an idle timeout, a fuzz
/// server's answers) take a lane of their own, `.waiting`, two at a time beside the five: a
/// test asleep in a slot of the five left a core idle for its whole wait.
struct Gated: SuiteTrait, TestTrait, TestScoping {
    enum Lane: Sendable { case computing, waiting }
    var lane = Lane.computing
    /// Ahead of every test queued (`.longPole`): a test that takes a tenth of the suite's time,
    /// started last, would end the suite alone.
    var first = false
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }  // a suite: its tests are gated one by one
        // A waiting test in a gated suite is let through here and held by its own lane.
        if lane == .computing, test.traits.contains(where: { ($0 as? Gated)?.lane == .waiting }) { return try await function() }
        // Likewise a long pole, held by its own trait.
        if !first, test.traits.contains(where: { ($0 as? Gated)?.first == true }) { return try await function() }
        let gate = lane == .waiting ? TestGate.waiting : TestGate.shared
        _ = TestTimings.origin
        let arrived = ContinuousClock.now
        await gate.enter(first: first)
        let entered = ContinuousClock.now
        defer { TestTimings.record(test.name, arrived: arrived, entered: entered) }
        do {
            try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
        } catch {
            await gate.leave()
            throw error
        }
        await gate.leave()
    }
}

extension Trait where Self == Gated {
    /// Runs the suite's tests at most five at a time, with every other gated suite's.
    static var gated: Gated { Gated() }
    /// For tests that mostly wait: two at a time, beside the five `.gated` ones.
    static var waiting: Gated { Gated(lane: .waiting) }
    /// A long test of a gated suite, let through its gate ahead of the tests queued there.
    static var longPole: Gated { Gated(first: true) }
}

/// A counting semaphore for tasks.
actor TestGate {
    static let sharedSlots = Int(ProcessInfo.processInfo.environment["CACHE_TEST_GATE"] ?? "") ?? 5
    static let waitingSlots = 2
    static let shared = TestGate(slots: sharedSlots)
    static let waiting = TestGate(slots: waitingSlots)

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(slots: Int) { free = slots }

    func enter(first: Bool = false) async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { first ? waiting.insert($0, at: 0) : waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// The threads the gated tests run on, in place of the test runner's two. A command-line test
/// blocks where it checks the database, runs the command in-process or asks the upstream for
/// what it saw; on the runner's two threads each of those blocks stopped every other test from
/// resuming, and the machine sat a third idle while hundreds of tests waited for a thread.
final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// One for each test the gates let through, and one spare, so a blocked test never leaves
    /// another with no thread to resume on.
    static let shared = TestThreads(count: TestGate.sharedSlots + TestGate.waitingSlots + 1)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.run() }
            thread.name = "test \(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
