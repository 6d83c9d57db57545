import Foundation
import CommandLineParsing
import Testing
import TestWaitLimits

@testable import Orchestrator

@Suite("Configuration file")
struct ConfigurationFileTests {
    @Test("a named pipe as the configuration file is refused at once, not read until a writer comes; /dev/null reads as empty")
    func namedPipe() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("orchd.conf")
        try #require(mkfifo(path, 0o600) == 0)
        let error = try failingIfBlocked(on: path) {
            #expect(throws: ConfigurationFileError.self) { try ConfigurationFile.load(path: path, required: true) }
        }
        #expect(error?.description == "cannot read configuration file \(path): it is a named pipe (FIFO), not a file")
        #expect(try ConfigurationFile.load(path: "/dev/null", required: true) == ConfigurationFile.Contents())
    }

    @Test("key = value lines with comments and blank lines give the settings")
    func parsesSettings() throws {
        let settings = try ConfigurationFile.parse(
            "# orchd\n\nconcurrency = 4   # per queue\n  kill-grace=1min 30s\nlog-level = debug\n", path: "orchd.conf")
        #expect(settings.settings == ["concurrency": .integer(4), "kill-grace": .timeSpan(microseconds: 90_000_000), "log-level": .text("debug")])
        #expect(settings.queues.isEmpty)
        let applied = DaemonConfiguration().applying(file: settings)
        #expect(applied.concurrency == 4 && applied.teardownGrace == .seconds(90) && applied.logLevel == .debug)
    }

    @Test("CRLF line ends are accepted like LF ones")
    func acceptsCRLF() throws {
        let settings = try ConfigurationFile.parse("# from Windows\r\nconcurrency = 4\r\nlog-level = debug\r\n", path: "f")
        #expect(settings.settings == ["concurrency": .integer(4), "log-level": .text("debug")])
    }

    @Test("a byte order mark at the start is not part of the first key; one elsewhere is shown escaped")
    func byteOrderMark() throws {
        let settings = try ConfigurationFile.parse("\u{FEFF}concurrency = 4\n", path: "f")
        #expect(settings.settings == ["concurrency": .integer(4)])
        do {
            _ = try ConfigurationFile.parse("log-level = debug\nconcurrency = \u{FEFF}4\n", path: "f")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("line 2: invalid value for 'concurrency': '\\u{FEFF}4'"), "\(error)")
        }
    }

    @Test("a bad value's invisible characters are shown escaped, not printed raw")
    func escapesInvisibleCharacters() {
        do {
            _ = try ConfigurationFile.parse("concurrency = 4\r\u{1B}[2J\n", path: "f")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "configuration file f, line 1: invalid value for 'concurrency': '4\\r\\u{1B}[2J' is not a whole number from 1 to 10000")
        }
    }

    @Test("a key given twice is refused, naming both lines")
    func refusesRepeatedKey() {
        do {
            _ = try ConfigurationFile.parse("concurrency = 4\n# later\nconcurrency = 8\n", path: "f")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "configuration file f, line 3: 'concurrency' is set again (first on line 1); give each key once")
        }
    }

    @Test("an unknown key or a bad value names the line")
    func errorsNameTheLine() {
        #expect(throws: ConfigurationFileError.self) { try ConfigurationFile.parse("concurrency = 0\n", path: "f") }
        do {
            _ = try ConfigurationFile.parse("concurrency = 2\n# fine\ncolour = blue\n", path: "f")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "configuration file f, line 3: unknown key 'colour' (known keys: concurrency, kill-grace, log-level, drain-timeout, retention-age, retention-count, event-retention, sync, sync-interval, allow-users, admin-group, max-running-per-user, queue.NAME)")
        }
        do {
            _ = try ConfigurationFile.parse("just words\n", path: "f")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("line 1: expected 'key = value'"))
        }
    }

    @Test("a missing default file is no settings; a missing explicit one is an error")
    func missingFile() throws {
        #expect(try ConfigurationFile.load(path: "/nonexistent/orchd.conf", required: false) == ConfigurationFile.Contents())
        #expect(throws: ConfigurationFileError.self) { try ConfigurationFile.load(path: "/nonexistent/orchd.conf", required: true) }
    }

    @Test("every span flag and key refuses a negative or ambiguous span with the parser's reason", arguments: [
        "kill-grace", "drain-timeout", "retention-age",
    ])
    func spanSettings(key: String) {
        for (value, reason) in [
            ("-1s", "'-1s' is negative; a time span cannot be negative"),
            ("1h30", "'1h30' is ambiguous: the number 30 has no unit; give every number its unit (e.g. 1h30min, not 1h30)"),
        ] {
            for arguments in [["--\(key)", value], ["--\(key)=\(value)"]] {
                let error = #expect(throws: CommandLineError.self) { try DaemonConfiguration.parse(arguments, environment: [:], uid: 0) }
                #expect(error?.message == "invalid value for option '--\(key)': \(reason)")
            }
            do {
                _ = try ConfigurationFile.parse("\(key) = \(value)\n", path: "f")
                Issue.record("expected an error")
            } catch {
                #expect(error.description == "configuration file f, line 1: invalid value for '\(key)': \(reason)")
            }
        }
        #expect(throws: Never.self) { try ConfigurationFile.parse("\(key) = 1h 30min\n", path: "f") }
    }

    @Test("queue.NAME lines declare queues with their settings; an empty value gives the defaults")
    func declaresQueues() throws {
        let settings = try ConfigurationFile.parse("queue.builds = concurrency=4, retry-base=10s, retry-cap=1h 30min\nqueue.io =\n", path: "f")
        #expect(settings.queues == [
            Scheduler.ConfiguredQueue(
                name: .init(rawValue: "builds")!, concurrency: 4, retryBase: .seconds(10), retryCap: .seconds(5400)),
            Scheduler.ConfiguredQueue(name: .init(rawValue: "io")!),
        ])
        // The configuration's queues are the file's, at each reload: a line taken out is no
        // longer declared by the file.
        let started = DaemonConfiguration().applying(file: settings)
        #expect(started.queues.map(\.name.rawValue) == ["builds", "io"])
        #expect(started.applying(file: try ConfigurationFile.parse("queue.io = max-running-per-user=2\n", path: "f")).queues == [
            Scheduler.ConfiguredQueue(name: .init(rawValue: "io")!, maxRunningPerUser: 2),
        ])
    }

    @Test("a bad queue line names the line and what is wrong", arguments: [
        ("queue.a = concurrency=0", "invalid concurrency '0': expected a whole number from 1 to 10000"),
        ("queue.a = colour=red", "unknown queue setting 'colour' (known: concurrency, retry-base, retry-cap, max-running-per-user, executor, slurm-partition, slurm-option)"),
        ("queue.a = concurrency", "expected 'setting=value' (concurrency, retry-base, retry-cap, max-running-per-user, executor, slurm-partition, slurm-option), got 'concurrency'"),
        ("queue.a = concurrency=2, concurrency=3", "'concurrency' is given twice"),
        ("queue.a = retry-base=10s, retry-cap=1s", "the retry cap (1s) is shorter than the retry base (10s)"),
        ("queue.a = retry-base=-1s", "invalid retry-base '-1s'"),
        ("queue.a = retry-base=200y", "the retry base must be at most 100 years"),
        ("queue.no/slash =", "'no/slash' is not a queue name"),
        ("queue.a =\nqueue.a = concurrency=2", "'queue.a' is set again (first on line 1)"),
    ])
    func refusesBadQueues(line: String, problem: String) {
        do {
            _ = try ConfigurationFile.parse(line + "\n", path: "f")
            Issue.record("expected an error for \(line)")
        } catch {
            #expect(error.description.contains(problem), "\(error.description)")
        }
    }
}
