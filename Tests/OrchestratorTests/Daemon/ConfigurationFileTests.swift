import CommandLineParsing
import Testing

@testable import Orchestrator

@Suite("Configuration file")
struct ConfigurationFileTests {
    @Test("key = value lines with comments and blank lines give the settings")
    func parsesSettings() throws {
        let settings = try ConfigurationFile.parse(
            "# orchd\n\nconcurrency = 4   # per queue\n  kill-grace=1min 30s\nlog-level = debug\n", path: "orchd.conf")
        #expect(settings == ["concurrency": .integer(4), "kill-grace": .timeSpan(microseconds: 90_000_000), "log-level": .text("debug")])
        let applied = DaemonConfiguration().applying(file: settings)
        #expect(applied.concurrency == 4 && applied.teardownGrace == .seconds(90) && applied.logLevel == .debug)
    }

    @Test("CRLF line ends are accepted like LF ones")
    func acceptsCRLF() throws {
        let settings = try ConfigurationFile.parse("# from Windows\r\nconcurrency = 4\r\nlog-level = debug\r\n", path: "f")
        #expect(settings == ["concurrency": .integer(4), "log-level": .text("debug")])
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
            #expect(error.description == "configuration file f, line 3: unknown key 'colour' (known keys: concurrency, kill-grace, log-level, drain-timeout, retention-age, retention-count, event-retention, sync, sync-interval)")
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
        #expect(try ConfigurationFile.load(path: "/nonexistent/orchd.conf", required: false) == [:])
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
}
