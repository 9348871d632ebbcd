import Foundation
import Testing

/// `Scripts/install --prefix DIR` as a user runs it: the release build, completions, man page,
/// units and crontab line, then the installed binary run with nothing of the build tree or the
/// Swift toolchain reachable.
@Suite(.serialized, .gated) struct InstallTests {
    /// Installed once for the suite, from the binary the suite already runs (`--binary`): the
    /// release build when it is current (`.ci/run` builds it first, into its own folder, since
    /// `swift test` holds `.build`'s lock), else the debug one. The suite never builds the
    /// release binary itself: that took minutes of a newcomer's first `swift test`.
    static let installed: Result<String, TestFailure> = {
        let prefix = RunFolder.path + "/install"
        guard let result = try? RunningProcess(Paths.repository + "/Scripts/install", ["--prefix", prefix, "--binary", Paths.cacheBinary],
                                               environment: [:]).wait().0
        else { return .failure(TestFailure("Scripts/install could not start")) }
        guard result.status == 0 else { return .failure(TestFailure("Scripts/install failed: \(result.stderr)")) }
        return .success(prefix)
    }()

    /// A bare environment: the system's PATH only, as cron and systemd give.
    static func bare(_ home: String, _ extra: [String: String] = [:]) -> [String] {
        ["-i", "HOME=\(home)", "PATH=/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1"] + extra.map { "\($0)=\($1)" }
    }

    static func run(_ command: [String], in home: String, _ extra: [String: String] = [:]) async throws -> RunResult {
        try await RunningProcess("/usr/bin/env", bare(home, extra) + command, environment: [:]).finished().0
    }

    /// What users install: the release build, static but for the system's C libraries. Run
    /// where it is built (`.ci/run`, or `Scripts/build-release` by hand, about 3 minutes here).
    @Test(.enabled(if: Paths.releaseIsCurrent, "no current release build: run 'CACHE_BUILD_DIR=.build/install-test Scripts/build-release' first, as .ci/run does"))
    func theInstalledBinaryRunsWithoutTheToolchain() async throws {
        let prefix = try Self.installed.get()
        let cache = prefix + "/bin/cache"
        let box = try Sandbox()
        let version = try await Self.run([cache, "--version"], in: box.folder)
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("cache ") && version.stdout.contains("\nSQLite 3.") && version.stdout.contains("\nlibcurl "))
        #expect(try await Self.run([cache, "-V"], in: box.folder).stdout == version.stdout)
        #expect(try await Self.run([cache, "version"], in: box.folder).stdout == version.stdout)

        // Nothing from the toolchain: no library from its folder, no runpath into it.
        let toolchain = await URL(fileURLWithPath: try Self.run(["sh", "-c", "command -v swift"], in: box.folder,
                                                          ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)).resolvingSymlinksInPath().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let libraries = try await box.run("/usr/bin/ldd", [cache])
        #expect(libraries.status == 0 && !libraries.stdout.contains("not found"), "\(libraries.stdout)")
        #expect(!toolchain.isEmpty && !libraries.stdout.contains(toolchain) && !libraries.stdout.contains("swift"), "\(libraries.stdout)")
        // The C++ runtime is linked in as well: loading libstdc++ cost a quarter of each start.
        #expect(!libraries.stdout.contains("libstdc++") && !libraries.stdout.contains("libgcc_s"), "\(libraries.stdout)")
        // libcurl, libmicrohttpd and libyaml are loaded by the commands that need them, not at
        // every start: `cache --version` pays for none of them.
        #expect(!["libcurl", "libmicrohttpd", "libyaml"].contains(where: libraries.stdout.contains), "\(libraries.stdout)")
        let manifest = box.folder + "/manifest.yaml"
        try "type: DeclarativeSource\nstreams: []\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let imported = try await Self.run([cache, "import", "airbyte", manifest, "--plan", "--json"], in: box.folder)
        #expect(imported.status == 0 && imported.stdout.contains(#""streams": []"#), "\(imported.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: cache)[.size] as? Int)
        #expect(size <= 24 << 20, "\(size) bytes")

        // It fetches over https with libcurl loaded from the system.
        let upstream = try LoopbackUpstream(.tls)
        let env = ["CACHE_DB": box.database]
        #expect(try await Self.run([cache, "sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"]
                             + upstream.trust, in: box.folder, env).status == 0)
        let sync = try await Self.run([cache, "sync", "bank"], in: box.folder, env)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try await Self.run([cache, "list", "bank", "--offline", "--json"], in: box.folder, env).jsonArray().count == 6)
    }

    @Test func completionsManPageAndUnitsAreInstalled() async throws {
        let prefix = try Self.installed.get()
        let box = try Sandbox()
        let bash = prefix + "/share/bash-completion/completions/cache"
        #expect(try await box.run("/bin/bash", ["-n", bash]).status == 0)

        // The bash completion completes commands, options and the cache's own source names.
        let env = ["CACHE_DB": box.database, "PATH": "\(prefix)/bin:/usr/bin:/bin"]
        #expect(try await Self.run([prefix + "/bin/cache", "sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:9/a"],
                             in: box.folder, env).status == 0)
        func complete(_ words: [String]) async throws -> [String] {
            let script = ". '\(bash)'; COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); COMP_CWORD=\(words.count - 1); _cache; printf '%s\\n' \"${COMPREPLY[@]}\""
            return try await Self.run(["/bin/bash", "-c", script], in: box.folder, env).stdout.split(separator: "\n").map(String.init)
        }
        #expect(try await complete(["cache", "sy"]) == ["sync"])
        #expect(try await complete(["cache", "list", "--st"]) == ["--stale"])
        #expect(try await complete(["cache", "sync", ""]) == ["bank"])
        #expect(try await complete(["cache", "sources", "s"]) == ["set"])
        #expect(try await complete(["cache", "sources", "set", "bank", "--mode", ""]) == ["replace", "merge"])
        #expect(try await complete(["cache", "--db", "/tmp/x", "sources", "add", "x", "--ki"]) == ["--kind"])
        // Source names come from the database --db names.
        let other = box.folder + "/other.sqlite3"
        #expect(try await Self.run([prefix + "/bin/cache", "--db", other, "sources", "add", "elsewhere", "--kind", "jokes", "--url",
                              "http://127.0.0.1:9/j"], in: box.folder, env).status == 0)
        #expect(try await complete(["cache", "--db", other, "sync", ""]) == ["elsewhere"])
        #expect(try await complete(["cache", "--db=" + other, "list", ""]) == ["elsewhere"])

        for (shell, file) in [("zsh", "/share/zsh/site-functions/_cache"), ("fish", "/share/fish/vendor_completions.d/cache.fish")] {
            let script = try String(contentsOfFile: prefix + file, encoding: .utf8)
            #expect(script.contains("sources") && script.contains("if-stale"))
            if let path = ["/usr/bin/\(shell)", "/bin/\(shell)"].first(where: FileManager.default.isExecutableFile) {
                let check = try await box.run(path, ["-n", prefix + file])
                #expect(check.status == 0, "\(shell): \(check.stderr)")
            } else {
                print("\(shell) is not installed: its script was made but not checked")
            }
        }

        // The man page renders without a warning and covers every command.
        let page = prefix + "/share/man/man1/cache.1"
        let rendered = try await box.run("/usr/bin/env", ["groff", "-man", "-Tutf8", "-ww", page])
        #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(rendered.stderr)")
        for command in ["sources set", "sync", "list", "status", "completion"] {
            #expect(rendered.stdout.contains("cache \(command)"), "\(command)")
        }

        // The units name the installed binary, and systemd accepts them where it is installed.
        let units = prefix + "/share/systemd/user"
        let service = try String(contentsOfFile: units + "/cache-sync.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\"\(prefix)/bin/cache\" sync --if-stale --quiet"))
        // The metrics after every run, failed or not; the history pruned daily by its own timer.
        #expect(service.contains("ExecStopPost=\"\(prefix)/bin/cache\" metrics --textfile %h/.cache/cache/metrics.prom"))
        #expect(try String(contentsOfFile: units + "/cache-prune.service", encoding: .utf8).contains("\" prune --keep 30d"))
        #expect(!service.contains("After=network-online") && !service.contains("Wants=network-online") && !service.contains("@CACHE@"))
        // The same system-wide, for a server: the user 'cache' and an explicit database.
        let system = try String(contentsOfFile: prefix + "/share/cache/system/cache-sync.service", encoding: .utf8)
        #expect(system.contains("User=cache") && system.contains("ExecStart=\"\(prefix)/bin/cache\" --db /var/lib/cache/cache.sqlite3 sync --if-stale --quiet"))
        // Litestream's sample names the same database (see the README's "Many machines").
        #expect(try String(contentsOfFile: prefix + "/share/cache/litestream.yml", encoding: .utf8).contains("- path: /var/lib/cache/cache.sqlite3"))
        // cache serve too, on loopback, as a service of its own.
        let serve = try String(contentsOfFile: units + "/cache-serve.service", encoding: .utf8)
        #expect(serve.contains("ExecStart=\"\(prefix)/bin/cache\" serve --listen 127.0.0.1:8765"))
        // Its command line as written (its port made free): with no --max-age, /healthz judges
        // each source by its own bound (three TTLs), so a server whose syncs stopped is drained.
        let exec = try #require(serve.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }).dropFirst("ExecStart=".count)
        var words: [String] = []
        for (index, part) in exec.split(separator: "\"", omittingEmptySubsequences: false).enumerated() {
            words += index % 2 == 1 ? [String(part)] : part.split(separator: " ").map { String($0) }
        }
        words = words.map { $0 == "127.0.0.1:8765" ? "127.0.0.1:0" : $0 }
        let upstream = try LoopbackUpstream()
        #expect(try await Self.run([prefix + "/bin/cache", "sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ttl", "1s"],
                                   in: box.folder, env).status == 0)
        #expect(try await Self.run([prefix + "/bin/cache", "sync", "jokes"], in: box.folder, env).status == 0)
        let unit = try ServeProcess(commandLine: words, box)
        let healthy = try unit.get("/healthz")
        #expect(healthy.status == 200, "\(healthy.text)")
        try poll(seconds: 15) { try unit.get("/healthz").status == 503 }
        let drained = try unit.get("/healthz")
        #expect(drained.headers["retry-after"] == "60")
        try await Self.verify([units + "/cache-sync.service", units + "/cache-sync.timer", units + "/cache-prune.service",
                               units + "/cache-prune.timer", units + "/cache-serve.service"], prefix: prefix, box)
        let systemUnits = prefix + "/share/cache/system"
        try await Self.verify([systemUnits + "/cache-sync.service", systemUnits + "/cache-sync.timer",
                               systemUnits + "/cache-prune.service", systemUnits + "/cache-prune.timer",
                               systemUnits + "/cache-serve.service"], prefix: prefix, box)
        #expect(service.contains("Documentation=file://\(prefix)/share/man/man1/cache.1"), "\(service)")
        // The system units are hardened: systemd's own score of their exposure is below 5.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            for unit in ["cache-sync.service", "cache-prune.service", "cache-serve.service"] {
                let scored = try await box.run("/usr/bin/systemd-analyze", ["security", "--offline=true", systemUnits + "/" + unit])
                let line = scored.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") } ?? ""
                let score = line.split(separator: ":").last.flatMap { Double($0.split(separator: " ").first ?? "") }
                #expect(try #require(score, "\(unit): \(scored.stdout.suffix(300)) \(scored.stderr)") < 5, "\(unit): \(line)")
            }
        }
    }

    /// `Scripts/build-release --help` prints its help and builds nothing; an unknown argument
    /// is a usage error.
    @Test func buildReleaseHasHelp() async throws {
        let box = try Sandbox()
        let started = ContinuousClock.now
        let help = try await box.run(Paths.repository + "/Scripts/build-release", ["--help"])
        #expect(help.status == 0 && help.stdout.hasPrefix("Usage: Scripts/build-release") && help.stdout.contains("CACHE_BUILD_DIR"), "\(help.stdout)")
        #expect(ContinuousClock.now - started < .seconds(10), "--help took as long as a build")
        let wrong = try await box.run(Paths.repository + "/Scripts/build-release", ["--prefix", "x"])
        #expect(wrong.status == 64 && wrong.stderr.contains("unknown argument '--prefix'"), "\(wrong.stderr)")
    }

    /// `Scripts/soak` runs every test the suite runs smaller: each test it names exists, and
    /// each test file that scales a test (`TestScale.pick`) has a test the script names.
    @Test func soakRunsEveryScaledTest() async throws {
        let box = try Sandbox()
        let listed = try await box.run(Paths.repository + "/Scripts/soak", ["--list"])
        #expect(listed.status == 0)
        let names = listed.stdout.split(separator: "\n").map(String.init)
        #expect(names.count >= 4, "\(listed.stdout)")
        let folder = Paths.repository + "/Tests/CacheCLITests"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
        let texts = try files.map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
        for name in names {
            #expect(texts.contains { $0.contains("func \(name)(") }, "Scripts/soak names \(name), which is no test")
        }
        let scaling = "TestScale" + ".pick("  // spelled apart, so this file does not match itself
        for (file, text) in zip(files, texts) where text.contains(scaling) {
            #expect(names.contains { text.contains("func \($0)(") }, "\(file) scales a test that Scripts/soak does not run")
        }
        let wrong = try await box.run(Paths.repository + "/Scripts/soak", ["--fast"])
        #expect(wrong.status == 64 && wrong.stderr.contains("unknown argument '--fast'"), "\(wrong.stderr)")
    }

    /// `systemd-analyze verify`, where the machine has it.
    static func verify(_ files: [String], prefix: String, _ box: Sandbox) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            print("systemd-analyze is not installed: the units were not verified")
            return
        }
        // Whether or not the prefix's man folder is on MANPATH.
        let verify = try await box.run("/usr/bin/systemd-analyze", ["verify"] + files, environment: ["MANPATH": prefix + "/share/man"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let bare = try await box.run("/usr/bin/env", ["-u", "MANPATH", "/usr/bin/systemd-analyze", "verify"] + files)
        #expect(bare.status == 0, "without MANPATH: \(bare.stdout) \(bare.stderr)")
    }

    /// A prefix holding a space, '&' and '%', installed with HOME unset: every unit and line
    /// names the binary so that systemd and cron run it, and the install says how to link
    /// units that are not on systemd's user unit path.
    @Test func anOddPrefixAndNoHomeStillGiveWorkingUnitsAndLines() async throws {
        let first = try Self.installed.get()
        let box = try Sandbox()
        let prefix = box.folder + "/odd & co 100%"
        let install = try await box.run("/usr/bin/env", ["-u", "HOME", Paths.repository + "/Scripts/install", "--prefix", prefix,
                                                         "--binary", first + "/bin/cache"])
        #expect(install.status == 0, "\(install.stderr)")
        #expect(install.stdout.contains("systemctl --user link '\(prefix)/share/systemd/user/cache-sync.service'"), "\(install.stdout)")
        let service = try String(contentsOfFile: prefix + "/share/systemd/user/cache-sync.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\"\(box.folder)/odd & co 100%%/bin/cache\" sync"), "\(service)")
        try await Self.verify([prefix + "/share/systemd/user/cache-sync.service", prefix + "/share/cache/system/cache-sync.service"],
                              prefix: prefix, box)

        // Each crontab line as cron runs it: `\%` is a %, the rest goes to sh, in cron's bare
        // environment. The sync line syncs and publishes the metrics; the prune line is silent.
        let home = box.folder + "/home"
        let upstream = try LoopbackUpstream()
        #expect(try await Self.run([prefix + "/bin/cache", "sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten"],
                                   in: home).status == 0)
        let lines = try String(contentsOfFile: prefix + "/share/cache/crontab", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.count == 2)
        for line in lines {
            let command = String(line.split(separator: " ", maxSplits: 5).last ?? "").replacingOccurrences(of: "\\%", with: "%")
            let run = try await Self.run(["/bin/sh", "-c", command], in: home)
            #expect(run.status == 0 && run.stdout.isEmpty && run.stderr.isEmpty, "\(command): \(run.status) \(run.stdout) \(run.stderr)")
        }
        #expect(try String(contentsOfFile: home + "/.cache/cache/metrics.prom", encoding: .utf8).contains(#"cache_rows{source="jokes"} 10"#))
    }

    /// The crontab line runs under cron's bare environment: full path, tokens file read.
    @Test func theCrontabLineWorksUnderCronsEnvironment() async throws {
        let prefix = try Self.installed.get()
        let box = try Sandbox()
        let upstream = try LoopbackUpstream()
        let home = box.folder + "/home"
        let line = try #require(try String(contentsOfFile: prefix + "/share/cache/crontab", encoding: .utf8)
            .split(separator: "\n").first { !$0.hasPrefix("#") })
        let command = line.split(separator: " ", maxSplits: 5).last.map(String.init) ?? ""
        #expect(command.contains(prefix + "/bin/cache"))
        for folder in [home, box.folder + "/home-without-tokens"] {
            #expect(try await Self.run([prefix + "/bin/cache", "sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account",
                                  "--token-env", "BANK_TOKEN"], in: folder).status == 0)
        }
        // Without the tokens file the source cannot sync (78); with it, the token is sent.
        #expect(try await Self.run(["/bin/sh", "-c", command], in: box.folder + "/home-without-tokens").status == 78)
        try FileManager.default.createDirectory(atPath: home + "/.config/cache", withIntermediateDirectories: true)
        try "BANK_TOKEN=cr0n-t0ken\n".write(toFile: home + "/.config/cache/tokens.env", atomically: true, encoding: .utf8)
        let run = try await Self.run(["/bin/sh", "-c", command], in: home)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        let requests = try upstreamRequests(upstream)
        #expect(requests.last?["authorization"] as? String == "Bearer cr0n-t0ken", "\(requests)")
    }
}
