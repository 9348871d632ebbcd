import Testing

/// One of the engine's tests at a time. They are synchronous and some compute for seconds
/// (decoding bodies of a million keys, truncating a body at every byte); each holds one of the
/// test runner's two threads while it runs. Two at once left no thread to resume the
/// command-line tests waiting for their processes, and their timing checks measured the wait.
/// (The same gate as CacheCLITests' `.gated`, kept apart: the test targets share no code.)
struct Computing: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        await ComputeGate.shared.enter()
        do {
            try await function()
        } catch {
            await ComputeGate.shared.leave()
            throw error
        }
        await ComputeGate.shared.leave()
    }
}

extension Trait where Self == Computing {
    static var computing: Computing { Computing() }
}

actor ComputeGate {
    static let shared = ComputeGate()

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
