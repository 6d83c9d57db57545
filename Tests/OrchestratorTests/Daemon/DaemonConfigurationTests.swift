import CommandLineParsing
import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Daemon configuration")
struct DaemonConfigurationTests {
    /// The configuration `arguments` ask to run with.
    private func configuration(_ arguments: [String], environment: [String: String] = [:], uid: UInt32 = 0) throws -> DaemonConfiguration {
        guard case .run(let parsed) = try DaemonConfiguration.parse(arguments, environment: environment, uid: uid) else {
            throw CommandLineError(.missingCommand, "expected a configuration to run with")
        }
        return parsed
    }

    @Test("command line over file over default, for every setting and at every reload")
    func precedence() throws {
        let parsed = try configuration(["--concurrency", "2", "--config", "/x/orchd.conf", "--log-level=warning"], uid: 1000)
        #expect(parsed.configurationFile == "/x/orchd.conf" && parsed.configurationFileRequired)
        #expect(parsed.concurrency == 2 && parsed.logLevel == .warning, "the command line alone until the file is read")
        let file = try ConfigurationFile.parse("concurrency = 8\nkill-grace = 1s\nlog-level = debug\n", path: "f")
        let started = parsed.applying(file: file)
        #expect(started.concurrency == 2, "the command line wins over the file")
        #expect(started.logLevel == .warning)
        #expect(started.teardownGrace == .seconds(1), "the file wins over the default")
        #expect(started.drainTimeout == .seconds(10), "neither: the default")
        // A reload applies the new file beneath the same command line; a key the file no
        // longer gives returns to its default.
        let reloaded = started.applying(file: try ConfigurationFile.parse("concurrency = 16\nretention-count = 5\n", path: "f"))
        #expect(reloaded.concurrency == 2 && reloaded.logLevel == .warning)
        #expect(reloaded.teardownGrace == .seconds(5))
        #expect(reloaded.retentionCount == 5)
        #expect(reloaded.configurationFile == parsed.configurationFile && reloaded.stateDirectory == parsed.stateDirectory)
    }

    @Test("every option decodes into a field of the configuration, changing it from the default")
    func everyOptionReachesItsField() throws {
        var defaults = try configuration([])
        defaults.commandLine = [:]
        for option in DaemonConfiguration.command.options {
            let value: String? = switch option.kind {
            case .path: "/x7"
            case .integerIn(let range): String(range.upperBound == Int.max ? range.lowerBound + 1 : range.upperBound)
            case .timeSpan: "7s"
            case .timeSpanIn(let range): TimeSpan.format(range.upperBound)
            case .choice(let words): words.first { !DaemonConfiguration.help.contains("(default: \($0)") }
            case .rule: "x7"  // a user name for --allow-users, a group name for --admin-group
            default: nil
            }
            if option.takesValue { try #require(value != nil, "\(option.name) has a kind this test does not know") }
            var parsed = try configuration(value.map { ["--\(option.name)", $0] } ?? ["--\(option.name)"])
            parsed.commandLine = [:]
            #expect(String(describing: parsed) != String(describing: defaults), "--\(option.name) changed nothing")
        }
    }

    @Test("sync: always by default; interval with its interval (default 100ms) from a flag or the file; flags win")
    func syncPolicy() throws {
        let plain = try configuration([])
        #expect(plain.sync == .always)
        #expect(plain.applying(file: try ConfigurationFile.parse("sync = interval\n", path: "f")).sync == .interval(.milliseconds(100)))
        #expect(plain.applying(file: try ConfigurationFile.parse("sync = interval\nsync-interval = 2s\n", path: "f")).sync == .interval(.seconds(2)))
        let flags = try configuration(["--sync", "always", "--sync-interval", "5ms"])
        #expect(flags.applying(file: try ConfigurationFile.parse("sync = interval\n", path: "f")).sync == .always)
        let interval = try configuration(["--sync", "interval"])
        #expect(interval.applying(file: try ConfigurationFile.parse("sync-interval = 2s\n", path: "f")).sync == .interval(.seconds(2)))
        #expect(SyncPolicy.interval(.seconds(2)).intervalUSec == 2_000_000 && SyncPolicy.always.intervalUSec == nil)
        for bad in ["sync = never\n", "sync-interval = 0\n", "sync-interval = 61min\n", "sync-interval = -1s\n"] {
            #expect(throws: ConfigurationFileError.self, "\(bad)") { try ConfigurationFile.parse(bad, path: "f") }
        }
    }

    @Test("retention 0 means off, from the command line and the file")
    func retentionZeroIsOff() throws {
        let off = try configuration(["--retention-age", "0", "--retention-count", "0"])
        #expect(off.retentionAge == nil && off.retentionCount == nil)
        let on = try configuration(["--retention-age", "7d", "--retention-count", "10"])
        #expect(on.retentionAge == .seconds(7 * 86_400) && on.retentionCount == 10)
        #expect(on.applying(file: try ConfigurationFile.parse("retention-count = 0\n", path: "f")).retentionCount == 10)
    }

    @Test("a bad value gets the same reason from a flag and from the file, for every key the file takes")
    func oneCheckForFlagsAndFile() throws {
        let bad = [
            "concurrency": "0", "kill-grace": "soon", "log-level": "loud", "drain-timeout": "-1s", "retention-age": "1h30",
            "retention-count": "-1", "event-retention": "999", "sync": "never", "sync-interval": "2h",
            "allow-users": "a:b", "admin-group": "a b", "max-running-per-user": "10001",
        ]
        #expect(Set(bad.keys) == Set(DaemonConfiguration.fileKeys))
        for (key, value) in bad {
            let error = #expect(throws: CommandLineError.self, "\(key)") {
                try DaemonConfiguration.parse(["--\(key)", value], environment: [:], uid: 0)
            }
            let reason = try #require(error?.message.split(separator: ": ", maxSplits: 1).last.map(String.init))
            #expect(error?.message == "invalid value for option '--\(key)': \(reason)")
            do {
                _ = try ConfigurationFile.parse("\(key) = \(value)\n", path: "f")
                Issue.record("expected an error for \(key)")
            } catch {
                #expect(error.description == "configuration file f, line 1: invalid value for '\(key)': \(reason)")
            }
        }
    }

    @Test("paths and containment are command-line options only; the file names them as such")
    func startUpFactsNotInFile() {
        do {
            _ = try ConfigurationFile.parse("state-dir = /x\n", path: "f")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix("configuration file f, line 1: 'state-dir' is set on the command line only (--state-dir); known keys: concurrency,"))
        }
    }

    @Test("orchd has no command word: a stray word, an orchctl global option or an empty path is a usage error")
    func usageErrors() {
        for (arguments, message) in [
            (["run"], "unexpected argument 'run'"),
            (["--json"], "unknown option '--json'"),
            (["--bogus"], "unknown option '--bogus'"),
            (["--state-dir"], "missing value for option '--state-dir <dir>'"),
            (["--socket="], "invalid value for option '--socket': the path is empty; leave the option out for the default"),
            (["--concurrency", "0"], "invalid value for option '--concurrency': '0' is not a whole number from 1 to 10000"),
            ([DaemonConfiguration.testBlockControlQueueFlag + "=yes"], "option '\(DaemonConfiguration.testBlockControlQueueFlag)' does not take a value"),
        ] {
            let error = #expect(throws: CommandLineError.self, "\(arguments)") {
                try DaemonConfiguration.parse(arguments, environment: [:], uid: 0)
            }
            #expect(error?.message == message, "\(arguments)")
        }
    }

    @Test("--help and --version are requests, not configurations")
    func helpAndVersion() throws {
        for arguments in [["--help"], ["-h"], ["--concurrency", "2", "--help"]] {
            guard case .help = try DaemonConfiguration.parse(arguments, environment: [:], uid: 0) else {
                Issue.record("expected help for \(arguments)")
                continue
            }
        }
        guard case .version = try DaemonConfiguration.parse(["--version"], environment: [:], uid: 0) else {
            Issue.record("expected the version")
            return
        }
    }

    @Test("relative paths are made absolute against the working directory; defaults follow the environment")
    func paths() throws {
        let cwd = FileManager.default.currentDirectoryPath
        let relative = try configuration(["--state-dir", "state", "--socket", "s.sock", "--config", "c.conf"])
        #expect(relative.stateDirectory == cwd + "/state" && relative.socketPath == cwd + "/s.sock")
        #expect(relative.configurationFile == cwd + "/c.conf")
        let defaults = try configuration([], environment: ["ORCHD_STATE_DIR": "/srv/orchd", "ORCHD_SOCKET": "/run/x.sock"])
        #expect(defaults.stateDirectory == "/srv/orchd" && defaults.socketPath == "/run/x.sock")
        #expect(defaults.configurationFile == "/etc/orchd/orchd.conf" && !defaults.configurationFileRequired)
    }

    @Test("the default configuration file: /etc for root, XDG_CONFIG_HOME or ~/.config for others")
    func defaultPath() throws {
        #expect(DaemonConfiguration.defaultConfigurationFile(environment: ["HOME": "/home/a"], uid: 0) == "/etc/orchd/orchd.conf")
        #expect(DaemonConfiguration.defaultConfigurationFile(environment: ["HOME": "/home/a"], uid: 1000) == "/home/a/.config/orchd/orchd.conf")
        #expect(DaemonConfiguration.defaultConfigurationFile(environment: ["HOME": "/home/a", "XDG_CONFIG_HOME": "/c"], uid: 1000) == "/c/orchd/orchd.conf")
        let parsed = try configuration([], environment: ["HOME": "/home/a"], uid: 1000)
        #expect(parsed.configurationFile == "/home/a/.config/orchd/orchd.conf" && !parsed.configurationFileRequired)
    }

    @Test("the test-only flag is accepted but not shown in --help")
    func hiddenTestFlag() throws {
        #expect(try configuration([DaemonConfiguration.testBlockControlQueueFlag]).testBlockControlQueueOnSIGUSR1)
        #expect(try !configuration([]).testBlockControlQueueOnSIGUSR1)
        #expect(!DaemonConfiguration.help.contains("test-block"))
        #expect(!DaemonConfiguration.usage.contains("test-block"))
    }

    @Test("orchd --help lists every option but the hidden one, and matches its golden file")
    func helpGolden() throws {
        // Regenerate deliberately with `.build/debug/orchd --help > Tests/OrchestratorTests/Golden/orchd-help.txt`
        // and review the diff.
        let golden = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Golden/orchd-help.txt")
        let expected = String(decoding: try Data(contentsOf: golden), as: UTF8.self)
        #expect(DaemonConfiguration.help == expected)
        for option in DaemonConfiguration.command.options where !option.isHidden {
            #expect(DaemonConfiguration.help.contains("  \(option.label)"), "\(option.name)")
            #expect(DaemonConfiguration.usage.contains("[\(option.label)]"), "\(option.name)")
        }
    }
}
