import Foundation
import OrchestratorAPI
import Testing

/// Faults a hostile tester found in what orchctl sends and how it reads orchd's answers:
/// oversized calls and settings, jobs pruned during a wait, batch lines an error must name,
/// empty paths.
@Suite("orchctl against hostile input, end to end")
struct ClientRobustnessTests {
    /// Writes `text` to a file in the daemon's directory and returns its path.
    private func file(_ daemon: TestDaemon, _ name: String, _ text: String) throws -> String {
        let path = daemon.directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("an argument or a working directory that is not valid UTF-8 is refused, not changed on its way to the job")
    func bytesThatAreNotUTF8() throws {
        let daemon = try TestDaemon()
        // The shell makes the bytes: Foundation's Process takes only valid text.
        let orchctl = "'\(Binaries.orchctl)' --socket '\(daemon.socketPath)'"
        for command in ["submit -- printf %s \"$(printf 'a\\377b')\"", "submit --shell \"echo $(printf '\\376')\""] {
            let refused = try TestDaemon.run("/bin/sh", ["-c", "\(orchctl) \(command)"])
            #expect(refused.status == 64, "\(command): \(refused)")
            #expect(refused.standardError.contains("is not valid UTF-8; orchd keeps commands, paths and names as UTF-8 text"), "\(refused)")
            #expect(refused.standardError.contains("Usage: orchctl submit ["), "the command's usage, not orchctl's: \(refused)")
        }
        #expect(try TestDaemon.run("/bin/sh", ["-c", "\(orchctl) submit -- printf %s \"$(printf 'a\\377b')\""]).standardError.contains("'a\\xffb'"))
        let directory = "cd \"$(printf '\(daemon.directory)/dir\\377')\""
        _ = try TestDaemon.run("/bin/sh", ["-c", "mkdir \"$(printf '\(daemon.directory)/dir\\377')\""])
        for command in ["submit -- pwd", "submit --cwd sub -- pwd"] {
            let refused = try TestDaemon.run("/bin/sh", ["-c", "\(directory) && \(orchctl) \(command)"])
            #expect(refused.status == 64 && refused.standardError.contains("is not valid UTF-8"), "\(command): \(refused)")
        }
        let absolute = try TestDaemon.run("/bin/sh", ["-c", "\(directory) && \(orchctl) submit --cwd /tmp -- pwd"])
        #expect(absolute.status == 0, "\(absolute)")
        #expect(try daemon.orchctl(["wait", absolute.line]).status == 0)
        #expect(try daemon.orchctl(["logs", absolute.line]).standardOutput == "/tmp\n")
        let id = try daemon.orchctl(["submit", "--", "printf", "%s", "é✓"]).line
        #expect(try daemon.orchctl(["wait", id]).status == 0)
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "é✓", "valid UTF-8 runs byte for byte")
    }

    @Test("with standard output closed or full, orchctl says it cannot write its output and exits non-zero; its socket never takes descriptor 1 or 2")
    func closedOrFullStandardOutput() throws {
        let daemon = try TestDaemon()
        let orchctl = "'\(Binaries.orchctl)' --socket '\(daemon.socketPath)'"
        // The socket used to take the closed descriptor 1, and the job's ID went to orchd as a
        // call; submit --wait then failed with orchd's protocol error, not the job's status.
        let waited = try TestDaemon.run("/bin/sh", ["-c", "\(orchctl) submit --wait -- sh -c 'exit 3' >&-"])
        #expect(waited.status == 3, "\(waited)")
        #expect(waited.standardError == "Error: cannot write to standard output: Bad file descriptor\n", "\(waited)")
        for redirect in [">&-", ">/dev/full"] {
            for command in ["submit -- true", "status --all", "show 1"] {
                let lost = try TestDaemon.run("/bin/sh", ["-c", "\(orchctl) \(command) \(redirect)"])
                #expect(lost.status == 1, "\(command) \(redirect): \(lost)")
                #expect(lost.standardError.hasPrefix("Error: cannot write to standard output: "), "\(command) \(redirect): \(lost)")
            }
        }
        // Standard error closed: the exit status still tells, and nothing reaches orchd.
        let quiet = try TestDaemon.run("/bin/sh", ["-c", "\(orchctl) show 999 2>&-"])
        #expect(quiet.status == 1, "\(quiet)")
        // Standard input closed: reading it fails as it would have.
        let unread = try TestDaemon.run("/bin/sh", ["-c", "\(orchctl) submit --batch - <&-"])
        #expect(unread.status == 64 && unread.standardError.contains("cannot read -: Bad file descriptor"), "\(unread)")
        let listed = try daemon.orchctl(["status", "--all", "--json"])
        #expect(listed.status == 0, "\(listed)")
    }

    @Test("a hook command over 4 KiB, or with a NUL byte, is refused by orchctl and by orchd")
    func hookCommandCap() throws {
        let daemon = try TestDaemon()
        let long = String(repeating: "x", count: QueuesInterface.maximumHookBytes + 1)
        let refused = try daemon.orchctl(["queue", "add", "big", "--on", "failed=" + long])
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.standardError.contains("the failed hook's command is 4097 bytes; a hook command may have at most 4096"), "\(refused)")
        // Another client, not orchctl: orchd checks too.
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        #expect(throws: VarlinkClientError.self) {
            try client.call(QueuesInterface.set, .init(name: QueueName(rawValue: "big")!, hooks: ["failed": long]))
        }
        // A NUL byte would end the command /bin/sh -c runs there: refused, naming the hook.
        do {
            _ = try client.call(QueuesInterface.set, .init(name: QueueName(rawValue: "default")!, hooks: ["failed": "true\u{0}; touch x"]))
            Issue.record("a hook command with a NUL byte was taken")
        } catch {
            #expect("\(error)".contains("the failed hook's command contains a NUL byte"), "\(error)")
        }
        #expect(!(try daemon.orchctl(["queues", "--json"]).standardOutput.contains("touch x")))
        let fits = String(repeating: "x", count: QueuesInterface.maximumHookBytes)
        #expect(try daemon.orchctl(["queue", "add", "big", "--on", "failed=" + fits]).status == 0)
        #expect(try daemon.orchctl(["queues", "--json"]).standardOutput.contains(fits))
    }

    @Test("pause Q, resume Q and status --queue Q list only that queue, not every queue's hooks")
    func namedQueueListing() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["queue", "add", "a", "--concurrency", "1"]).status == 0)
        #expect(try daemon.orchctl(["queue", "add", "b", "--concurrency", "1"]).status == 0)
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        let listed = try client.call(QueuesInterface.list, .init(names: [QueueName(rawValue: "b")!, QueueName(rawValue: "nope")!]))
        #expect(listed.queues.map(\.name.rawValue) == ["b"])
        #expect(try client.call(QueuesInterface.list, .init()).queues.count >= 2)
        let paused = try daemon.orchctl(["pause", "b"])
        #expect(paused.standardOutput == "paused b\n", "\(paused)")
        #expect(try daemon.orchctl(["pause", "b"]).standardOutput == "b was already paused\n")
        #expect(try daemon.orchctl(["resume"]).standardOutput.contains("resumed b"))
    }

    @Test("wait --all succeeds when retention prunes jobs it listed as unfinished before it waits for them")
    func waitAllOutlivesPruning() throws {
        let daemon = try TestDaemon(arguments: ["--retention-count", "10"])
        let batch = try daemon.orchctl(["submit", "--batch", "-"], input: String(repeating: "true\n", count: 1_200))
        try #require(batch.status == 0, "\(batch)")
        let waited = try daemon.orchctl(["wait", "--all"])
        #expect(waited.status == 0, "\(waited)")
        #expect(waited.standardError.isEmpty, "\(waited)")
    }

    @Test("a call over orchd's 1 MiB cap gets orchd's MessageTooLarge error, not a broken pipe")
    func oversizedCallReportsTheServersError() throws {
        let daemon = try TestDaemon()
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        let huge = JobSpec(command: .argv(["echo", String(repeating: "x", count: 2_000_000)]), cwd: "/", environment: [:])
        do {
            _ = try client.call(JobsInterface.submitBatch, .init(specs: [huge, huge, huge]))
            Issue.record("a 6 MB call was accepted")
        } catch .remote(let error) {
            #expect(error.name == ManagerInterface.Errors.messageTooLarge, "\(error)")
        } catch {
            Issue.record("expected MessageTooLarge, got \(error)")
        }
    }

    @Test("a batch line or a submit over the message cap is refused by orchctl, naming its line")
    func oversizedSpecRefusedClientSide() throws {
        let daemon = try TestDaemon()
        let argv = "{\"argv\":[\"echo\",\"" + String(repeating: "x", count: 2_000_000) + "\"]}\n"
        let batch = try file(daemon, "big.batch", "true\ntrue\n" + argv + argv)
        let refused = try daemon.orchctl(["submit", "--batch", batch])
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.standardError.contains("Error: line 3: the job spec is 2.0 MiB; the limit is 1 MiB"), "\(refused)")
        #expect(refused.standardError.contains("line 4:"), "\(refused)")
        #expect(try daemon.orchctl(["status"]).standardOutput.contains("No jobs"), "nothing was submitted")
        // A plain submit with a large environment (ten variables: one may have 128 KiB at most).
        var environment = ["PATH": "/usr/bin:/bin"]
        for index in 0..<10 { environment["BIG\(index)"] = String(repeating: "y", count: 110_000) }
        let submit = try TestDaemon.run(
            Binaries.orchctl, ["--socket", daemon.socketPath, "submit", "--", "true"], environment: environment)
        #expect(submit.status == 64, "\(submit)")
        #expect(submit.standardError.contains("the job spec is 1.1 MiB; the limit is 1 MiB"), "\(submit)")
    }

    @Test("a batch whose lines each fit goes through whole when the first line's large environment is shared and a later line has a large command of its own")
    func largeSharedEnvironmentBesideLargeSpec() throws {
        let daemon = try TestDaemon()
        // 600 KB in ten variables: execve(2) takes at most 128 KiB in one.
        let variables = (0..<10).map { "\"BIG\($0)\":\"" + String(repeating: "e", count: 60_000) + "\"" }.joined(separator: ",")
        let environment = "{\"argv\":[\"true\"],\"environment\":{" + variables + "}}\n"
        let command = "{\"argv\":[\"true\",\"" + String(repeating: "b", count: 600_000) + "\"],\"environment\":{\"PATH\":\"/bin\"}}\n"
        let measure = environment.replacingOccurrences(of: "[\"true\"]", with: "[\"/bin/sh\",\"-c\",\"echo ${#BIG9}\"]")
        let batch = try file(daemon, "shared.batch", environment + command + measure)
        let submitted = try daemon.orchctl(["submit", "--batch", batch])
        #expect(submitted.status == 0, "\(submitted)")
        let ids = submitted.standardOutput.split(separator: "\n").map(String.init)
        try #require(ids.count == 3, "\(submitted)")
        #expect(try daemon.orchctl(["wait", ids[2]]).status == 0)
        #expect(try daemon.orchctl(["logs", ids[2]]).standardOutput == "60000\n", "the third job got the shared environment")
    }

    @Test("a batch line depending on a job that does not exist is named by its line")
    func unknownDependencyNamesLine() throws {
        let daemon = try TestDaemon()
        let batch = try file(daemon, "dep.batch", "true\n# a comment\n{\"argv\":[\"true\"],\"after\":[999999]}\n")
        let refused = try daemon.orchctl(["submit", "--batch", batch])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.standardError.contains("Error: line 3: invalid job: no job with ID 999999 to depend on"), "\(refused)")
        #expect(refused.standardError.contains("Nothing was submitted."), "\(refused)")
    }

    @Test("a batch line naming a queue orchd does not know is named by its line, and nothing is submitted")
    func unknownQueueNamesLine() throws {
        let daemon = try TestDaemon()
        let batch = try file(daemon, "queue.batch", "true\n{\"argv\":[\"true\"],\"queue\":\"wrok\"}\n")
        let refused = try daemon.orchctl(["submit", "--batch", batch])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.standardError.contains("Error: line 2: no queue named 'wrok'"), "\(refused)")
        // After the error, as after a batch file's own errors.
        #expect(refused.standardError.hasSuffix("'orchctl queue add wrok')\nNothing was submitted.\n"), "\(refused)")
        #expect(try daemon.orchctl(["status", "--all"]).standardOutput == "No jobs.\n")
    }

    @Test("a batch given an unknown --queue blames the option, not a line, and nothing is submitted")
    func unknownDefaultQueueBlamesNoLine() throws {
        let daemon = try TestDaemon()
        let batch = try file(daemon, "plain.batch", "true\ntrue\n")
        let refused = try daemon.orchctl(["submit", "--queue", "wrok", "--batch", batch])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.standardError.hasPrefix("Error: no queue named 'wrok'"), "\(refused)")
        #expect(refused.standardError.hasSuffix("\nNothing was submitted.\n"), "\(refused)")
        #expect(try daemon.orchctl(["status", "--all"]).standardOutput == "No jobs.\n")
    }

    @Test("a batch refused in a later chunk says up to which line its jobs were stored, and the IDs printed are exactly those")
    func laterChunkRefusedNamesLastStoredLine() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        // 2,000 jobs go in one call: line 2,050 is in the second, which orchd refuses whole.
        var lines = Array(repeating: "true", count: 2_100)
        lines[2_049] = "{\"argv\":[\"true\"],\"queue\":\"wrok\"}"
        let batch = try file(daemon, "long.batch", lines.joined(separator: "\n") + "\n")
        let refused = try daemon.orchctl(["submit", "--batch", batch])
        #expect(refused.status == 1, "\(refused.standardError)")
        let printed = refused.standardOutput.split(separator: "\n")
        #expect(refused.standardError.contains(
            "Note: \(printed.count) of 2100 jobs were submitted before the error, up to line \(printed.count); the error is about the rest, and none of them was."),
            "\(refused.standardError)")
        #expect(refused.standardError.contains("Error: line 2050: no queue named 'wrok'"), "\(refused.standardError)")
        let listed = try daemon.orchctl(["status", "--all", "--json"])
        let stored = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]] ?? []
        #expect(stored.compactMap { $0["id"] as? Int }.map(String.init) == printed.map(String.init))
    }

    @Test("an out-of-range or fractional number in a batch line names its field")
    func outOfRangeNumbersNameTheField() throws {
        let daemon = try TestDaemon()
        let batch = try file(daemon, "numbers.batch", """
            {"argv":["true"],"priority":1e3}
            {"argv":["true"],"priority":99999999999999999999}
            {"argv":["true"],"timeoutUSec":1e30}
            {"argv":["true"],"maxAttempts":2.5}
            {"argv":["true"],"after":[1e19]}
            {"argv":["true"],"after":[1,12345678901234567.5]}
            {"argv":["true"],"priority":1.0}
            {"argv":["true"],"maxAttempts":-9223372036854775809}
            {"argv":["true"],"priority":-5,"timeoutUSec":2147483648,"after":[]}

            """)
        let refused = try daemon.orchctl(["submit", "--batch", batch])
        #expect(refused.status == 64, "\(refused)")
        let errors = refused.standardError
        #expect(!errors.contains("not valid JSON"), "\(refused)")
        // The protocol's rule: an integer field takes a number written as an integer.
        #expect(errors.contains("line 1: field 'priority' must be a whole number from -9223372036854775808 to 9223372036854775807, written in digits, not 1e3"), "\(refused)")
        #expect(errors.contains("line 2: field 'priority' must be a whole number"), "\(refused)")
        #expect(errors.contains("line 3: field 'timeoutUSec' must be a whole number"), "\(refused)")
        #expect(errors.contains("line 4: field 'maxAttempts' must be a whole number"), "\(refused)")
        #expect(errors.contains("line 5: field 'after' must be a whole number"), "\(refused)")
        #expect(errors.contains("line 6: field 'after' must be a whole number from -9223372036854775808 to 9223372036854775807, written in digits, not 12345678901234567.5"), "\(refused)")
        #expect(errors.contains("line 7: field 'priority' must be a whole number"), "\(refused)")
        #expect(errors.contains("line 8: field 'maxAttempts' must be a whole number"), "\(refused)")
        #expect(!errors.contains("line 9:"), "integers written as integers pass this check: \(refused)")
    }

    @Test("a batch line's dependency on an ID past 2^53 keeps every digit")
    func hugeDependencyIDInBatch() throws {
        let daemon = try TestDaemon()
        let batch = try file(daemon, "huge.batch", """
            {"argv":["true"],"after":[9007199254740993]}

            """)
        let refused = try daemon.orchctl(["submit", "--batch", batch])
        // No such job: orchd names the ID it was sent, so a rounded one would show.
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.standardError.contains("9007199254740993"), "\(refused)")
        #expect(!refused.standardError.contains("9007199254740992"), "\(refused)")
    }

    @Test("queue set refuses a retry cap shorter than the retry base, in orchctl and in orchd")
    func retryCapBelowBase() throws {
        let daemon = try TestDaemon()
        let refused = try daemon.orchctl(["queue", "add", "Z", "--retry-base", "10min", "--retry-cap", "1s"])
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.standardError.contains("the retry cap (1s) is shorter than the retry base (10min)"), "\(refused)")
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        do {
            _ = try client.call(QueuesInterface.set, .init(name: QueueName(rawValue: "Z")!, retryBaseUSec: 600_000_000, retryCapUSec: 1_000_000))
            Issue.record("orchd stored a cap below the base")
        } catch .remote(let error) {
            #expect(error.name == QueuesInterface.Errors.invalidSetting, "\(error)")
        } catch {
            Issue.record("expected InvalidSetting, got \(error)")
        }
        #expect(try daemon.orchctl(["queue", "add", "Z", "--retry-base", "1s", "--retry-cap", "1s"]).status == 0)
        // Given in two calls, each checked against the other stored.
        #expect(try daemon.orchctl(["queue", "set", "Z", "--retry-base", "10min"]).status == 1)
        #expect(try daemon.orchctl(["queue", "set", "Z", "--retry-cap", "20min"]).status == 0)
        #expect(try daemon.orchctl(["queue", "set", "Z", "--retry-base", "10min"]).status == 0)
        let second = try daemon.orchctl(["queue", "set", "Z", "--retry-cap", "100ms"])
        #expect(second.status == 1, "\(second)")
        #expect(second.standardError.contains("queue Z: the retry cap (100ms) is shorter than the retry base (10min)"), "\(second)")
        #expect(try daemon.orchctl(["queues"]).standardOutput.contains("10min/20min"))
    }

    @Test("a retry base or cap of zero or over 100 years is a usage error in orchctl, as such a --timeout is, and refused by orchd")
    func retrySpansOutOfRange() throws {
        let daemon = try TestDaemon()
        for (arguments, message) in [
            (["queue", "set", "default", "--retry-base", "0"], "the retry base must be longer than zero"),
            (["queue", "add", "Z", "--retry-cap", "0s"], "the retry cap must be longer than zero"),
            (["queue", "add", "Z", "--retry-base", "99999999d", "--retry-cap", "99999999d"], "the retry base must be at most 100 years"),
            (["queue", "set", "default", "--retry-cap", "101y"], "the retry cap must be at most 100 years"),
        ] {
            let refused = try daemon.orchctl(arguments)
            #expect(refused.status == 64, "\(arguments): \(refused)")
            #expect(refused.standardError.contains(message), "\(arguments): \(refused)")
        }
        let client = try VarlinkClient.limited(socketPath: daemon.socketPath)
        for (base, cap) in [(Int64(0), Int64?.none), (1_000_000, 0), (-1, nil), (8_640_000_000_000_000, nil)] {
            do {
                _ = try client.call(QueuesInterface.set, .init(name: .default, retryBaseUSec: base, retryCapUSec: cap))
                Issue.record("orchd stored a retry base of \(base) µs, cap \(String(describing: cap))")
            } catch .remote(let error) {
                #expect(error.name == QueuesInterface.Errors.invalidSetting, "\(error)")
            } catch {
                Issue.record("expected InvalidSetting, got \(error)")
            }
        }
        let queues = try daemon.orchctl(["queues", "--json"])
        #expect(queues.standardOutput.contains("\"retryBaseUSec\" : 1000000"), "\(queues)")
    }

    @Test("an empty --socket or --state-dir is a usage error for orchd and orchctl, not the default path")
    func emptyPathsAreUsageErrors() throws {
        for arguments in [["--socket", ""], ["--state-dir", ""], ["--socket="], ["--config", ""]] {
            let result = try TestDaemon.run(Binaries.orchd, arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.standardError.contains("the path is empty"), "\(arguments): \(result)")
        }
        for arguments in [["--socket", "", "status"], ["status", "--socket="]] {
            let result = try TestDaemon.run(Binaries.orchctl, arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.standardError.contains("the path is empty"), "\(arguments): \(result)")
        }
    }

    @Test("a job database path that is a directory is reported as one")
    func databaseIsADirectory() throws {
        var template = Array("/tmp/orchd-e2e-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/state/orchd.db", withIntermediateDirectories: true)
        let result = try TestDaemon.run(Binaries.orchd, ["--state-dir", directory + "/state", "--socket", directory + "/orchd.sock"])
        #expect(result.status != 0, "\(result)")
        #expect(result.standardError.contains("\(directory)/state/orchd.db: it is a directory"), "\(result)")
    }
}
