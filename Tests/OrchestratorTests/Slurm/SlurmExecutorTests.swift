import Foundation
import OrchestratorAPI
import Testing
import TestWaitLimits

@testable import Orchestrator

/// The parts of the Slurm executor that need no cluster: the batch script (run here with
/// /bin/sh), the state mapping, and the parsing of squeue's and sacct's answers. The
/// end-to-end tests run them against a real cluster.
@Suite("Slurm executor without a cluster")
struct SlurmExecutorTests {
    /// Runs a generated script with /bin/sh, as slurmd would, and returns its output.
    private func run(_ script: SlurmBatchScript, in directory: TemporaryDirectory, input: String? = nil) throws -> (status: Int32, output: String) {
        let path = directory.file("job.sh")
        try script.text.write(toFile: path, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [path]
        process.environment = ["SLURM_JOB_ID": "77", "LEAKED": "from slurm"]
        if let input { process.standardInput = FileHandle(forReadingAtPath: input) }
        // A file, not a pipe: the end of a pipe's output would wait for the command too, which
        // the limit below does not kill.
        let output = directory.file("job.out")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: output)
        try process.run()
        #expect(process.waitUntilExit(atMost: 600), "the batch script was still running after 600 s")
        return (process.terminationStatus, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    @Test("the batch script runs the argv exactly, in its directory, with exactly its environment, and writes the exit status")
    func scriptRunsArgvExactly() throws {
        let directory = try TemporaryDirectory()
        let work = directory.file("dir 'with' $quotes")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let words = ["it's", "two words", "$HOME", "`id`", "back\\slash", "new\nline", "ünïcødé ✓", "", "'", "\"", "-n"]
        let script = SlurmBatchScript(
            arguments: ["/bin/sh", "-c", "printf '[%s]\\n' \"$@\"; pwd; env | sort; exit 3", "sh"] + words,
            workingDirectory: work, environment: ["PATH": "/usr/bin:/bin", "ODD": "a 'b' $c"],
            exitStatusPath: directory.file("7.exit"), title: "orchd job 7, attempt 1")
        let (status, output) = try run(script, in: directory)
        #expect(status == 3)
        // pwd prints the path without the doubled slash TemporaryDirectory may have.
        let expected = words.map { "[\($0)]\n" }.joined() + work.replacingOccurrences(of: "//", with: "/") + "\n"
        // Compared as bytes: exactly what the command printed.
        let bytes = Array(output.utf8)
        #expect(bytes.starts(with: Array(expected.utf8)), "\(output)")
        let rest = String(decoding: bytes.dropFirst(expected.utf8.count), as: UTF8.self)
        let environment = rest.split(separator: "\n").filter { !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=") }
        #expect(environment == ["ODD=a 'b' $c", "PATH=/usr/bin:/bin", "SLURM_JOB_ID=77"], "nothing of Slurm's environment leaks but the job ID")
        #expect(try String(contentsOfFile: directory.file("7.exit"), encoding: .utf8) == "3\n")
    }

    @Test("the command runs as a local job does: its standard input is the script's, and no signal is ignored (a background command would have SIGINT and SIGQUIT ignored and /dev/null for input)")
    func scriptKeepsInputAndSignals() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("input")
        try "the input\n".write(toFile: input, atomically: true, encoding: .utf8)
        let script = SlurmBatchScript(
            arguments: ["/bin/sh", "-c", "grep SigIgn /proc/self/status; cat"], workingDirectory: directory.path,
            environment: ["PATH": "/usr/bin:/bin"], exitStatusPath: directory.file("i.exit"), title: "t")
        let (status, output) = try run(script, in: directory, input: input)
        #expect(status == 0)
        let lines = output.split(separator: "\n")
        // SIGINT is bit 1 and SIGQUIT bit 2 of the mask (proc_pid_status(5)); signals the test
        // process itself ignores may be set too.
        let ignored = lines.first.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        #expect(ignored.map { $0 & 0b110 } == 0, "\(output)")
        #expect(lines.dropFirst() == ["the input"], "\(output)")
        #expect(try String(contentsOfFile: directory.file("i.exit"), encoding: .utf8) == "0\n")
    }

    @Test("a stop's signal reaches the command, the script waits for it to end, and writes no exit status for it: the stop decides the result")
    func scriptWaitsForAStoppedCommand() throws {
        let directory = try TemporaryDirectory()
        let marks = directory.file("marks")
        let ready = directory.file("ready")
        #expect(mkfifo(ready, 0o600) == 0)
        let script = SlurmBatchScript(
            arguments: ["/bin/sh", "-c", "trap 'echo handled >> \(marks); exit 7' INT; echo up >> \(marks); echo up > \(ready); while :; do sleep 0.05; done"],
            workingDirectory: directory.path, environment: ["PATH": "/usr/bin:/bin"], exitStatusPath: directory.file("s.exit"), title: "t")
        let path = directory.file("job.sh")
        try script.text.write(toFile: path, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [path]
        try process.run()
        // Up once the command wrote to the FIFO (the read waits for it); then SIGINT to the
        // script and the command, as Slurm signals every process of the job.
        #expect(readFIFO(ready) == "up\n")
        kill(process.processIdentifier, SIGINT)
        for pid in Self.children(of: process.processIdentifier) { kill(pid, SIGINT) }
        #expect(process.waitUntilExit(atMost: 600), "the script was still running 600 s after SIGINT")
        #expect(process.terminationStatus == 7, "the script waited for the command and exits with its status")
        #expect(try String(contentsOfFile: marks, encoding: .utf8) == "up\nhandled\n")
        #expect(!FileManager.default.fileExists(atPath: directory.file("s.exit")), "no exit status for a command a signal stopped")
    }

    /// The processes whose parent is `pid` (and theirs), from /proc.
    private static func children(of pid: Int32) -> [Int32] {
        let direct = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { Int32($0) }
        return direct + direct.flatMap { children(of: $0) }
    }

    @Test("a command whose name has a '=' is run, not taken by env for a variable assignment")
    func scriptRunsCommandWithEquals() throws {
        let directory = try TemporaryDirectory()
        let program = directory.file("a=b")
        try "#!/bin/sh\nprintf 'ran [%s]\\n' \"$1\"\nexit 5\n".write(toFile: program, atomically: true, encoding: .utf8)
        #expect(chmod(program, 0o755) == 0)
        for command in ["./a=b", program] {
            let script = SlurmBatchScript(
                arguments: [command, "x=y"], workingDirectory: directory.path, environment: ["PATH": "/usr/bin:/bin"],
                exitStatusPath: directory.file("e.exit"), title: "t")
            let (status, output) = try run(script, in: directory)
            #expect(status == 5, "\(command): \(output)")
            #expect(output == "ran [x=y]\n", "\(command)")
            #expect(try String(contentsOfFile: directory.file("e.exit"), encoding: .utf8) == "5\n")
        }
        // Found in the job's PATH, as execvp(3) finds it.
        let script = SlurmBatchScript(
            arguments: ["a=b", "p"], workingDirectory: "/", environment: ["PATH": directory.path],
            exitStatusPath: directory.file("p.exit"), title: "t")
        #expect(try run(script, in: directory) == (5, "ran [p]\n"))

        // Its environment is exactly the job's, as for any other command.
        // (env itself under that name: a shell script would set PWD on its own.)
        try FileManager.default.removeItem(atPath: program)
        #expect(symlink("/usr/bin/env", program) == 0)
        for environment in [["A": "1"], ["A": "1", "PWD": "/it's/set"]] {
            let script = SlurmBatchScript(
                arguments: ["./a=b"], workingDirectory: directory.path, environment: environment,
                exitStatusPath: directory.file("v.exit"), title: "t")
            let lines = try run(script, in: directory).output.split(separator: "\n").map(String.init)
            let expected = environment.merging(["SLURM_JOB_ID": "77"]) { $1 }.map { "\($0.key)=\($0.value)" }
            #expect(lines.sorted() == expected.sorted())
        }
    }

    @Test("a missing working directory or command is reported as a spawn failure in the exit status file")
    func scriptReportsSpawnFailures() throws {
        let directory = try TemporaryDirectory()
        let missingDirectory = SlurmBatchScript(
            arguments: ["true"], workingDirectory: directory.file("nowhere"), environment: [:],
            exitStatusPath: directory.file("a.exit"), title: "t")
        #expect(try run(missingDirectory, in: directory).status == 1)
        let text = try String(contentsOfFile: directory.file("a.exit"), encoding: .utf8)
        #expect(SlurmBatchScript.parseStatus(text) == .spawnFailed("cannot enter working directory \(directory.file("nowhere"))"))

        let missingCommand = SlurmBatchScript(
            arguments: ["no-such-command-orchd"], workingDirectory: directory.path, environment: ["PATH": "/usr/bin:/bin"],
            exitStatusPath: directory.file("b.exit"), title: "t")
        #expect(try run(missingCommand, in: directory).status == 127)
        let missing = try String(contentsOfFile: directory.file("b.exit"), encoding: .utf8)
        #expect(SlurmBatchScript.parseStatus(missing) == .spawnFailed("command not found: no-such-command-orchd"))

        // The shell's builtins, keywords and the script's own function are no commands a job
        // can run, as a local launch finds none of them: each is not found, not exit 127.
        for name in ["cd", "if", "report", "export"] {
            let builtin = SlurmBatchScript(
                arguments: [name, "x"], workingDirectory: directory.path, environment: ["PATH": "/usr/bin:/bin"],
                exitStatusPath: directory.file("c.exit"), title: "t")
            #expect(try run(builtin, in: directory).status == 127, "\(name)")
            let status = try String(contentsOfFile: directory.file("c.exit"), encoding: .utf8)
            #expect(SlurmBatchScript.parseStatus(status) == .spawnFailed("command not found: \(name)"), "\(name)")
        }
        // A program in a relative PATH entry, or in the working directory through an empty
        // entry (leading, inner, trailing, or PATH empty), is found, as execvp(3) finds it.
        try FileManager.default.createDirectory(atPath: directory.file("bin"), withIntermediateDirectories: true)
        for program in [directory.file("bin/mine"), directory.file("mine")] {
            try "#!/bin/sh\nexit 4\n".write(toFile: program, atomically: true, encoding: .utf8)
            #expect(chmod(program, 0o755) == 0)
        }
        for path in ["bin:/usr/bin:/bin", ":/usr/bin", "/usr/bin::/bin", "/usr/bin:", ""] {
            let found = SlurmBatchScript(
                arguments: ["mine"], workingDirectory: directory.path, environment: ["PATH": path],
                exitStatusPath: directory.file("d.exit"), title: "t")
            #expect(try run(found, in: directory).status == 4, "PATH=\(path)")
            #expect(try String(contentsOfFile: directory.file("d.exit"), encoding: .utf8) == "4\n", "PATH=\(path)")
        }
        // A job without PATH: its command is looked for in orchd's default search path, and
        // that file runs (env(1) alone would look in glibc's /bin:/usr/bin).
        let local = directory.file("local")
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        try "#!/bin/sh\nprintf 'ran %s\\n' \"$1\"; env\n".write(toFile: local + "/only-here", atomically: true, encoding: .utf8)
        #expect(chmod(local + "/only-here", 0o755) == 0)
        let noPath = SlurmBatchScript(
            arguments: ["only-here", "x"], workingDirectory: directory.path, environment: ["A": "1"],
            exitStatusPath: directory.file("g.exit"), title: "t", searchPath: local)
        let ran = try run(noPath, in: directory)
        #expect(ran.status == 0, "\(ran.output)")
        // (PWD is the script's own shell's.)
        let lines = ran.output.split(separator: "\n").filter { !$0.hasPrefix("PWD=") }
        #expect(lines.sorted() == ["A=1", "SLURM_JOB_ID=77", "ran x"], "its environment has no PATH either")
        // A directory or a file that is not executable of that name is passed over.
        let passedOver = SlurmBatchScript(
            arguments: ["bin"], workingDirectory: directory.path, environment: ["PATH": ":/usr/bin"],
            exitStatusPath: directory.file("f.exit"), title: "t")
        #expect(try run(passedOver, in: directory).status == 127)
    }

    @Test("a command found only as a file that may not be executed is reported as a local launch reports it")
    func scriptReportsPermissionDenied() throws {
        let directory = try TemporaryDirectory()
        let work = directory.path.replacingOccurrences(of: "//", with: "/")
        try FileManager.default.createDirectory(atPath: directory.file("bin"), withIntermediateDirectories: true)
        try "#!/bin/sh\nexit 4\n".write(toFile: directory.file("bin/plain"), atomically: true, encoding: .utf8)
        #expect(chmod(directory.file("bin/plain"), 0o644) == 0)
        func reason(_ arguments: [String], path: String) throws -> SlurmBatchScript.Status? {
            let script = SlurmBatchScript(
                arguments: arguments, workingDirectory: work, environment: ["PATH": path],
                exitStatusPath: directory.file("h.exit"), title: "t")
            _ = try run(script, in: directory)
            return SlurmBatchScript.parseStatus(try String(contentsOfFile: directory.file("h.exit"), encoding: .utf8))
        }
        // The first file found that may not be executed is named, as an absolute path.
        for (path, named) in [(work + "/bin:/usr/bin", work + "/bin/plain"), ("bin", work + "/bin/plain"), ("/usr/bin:bin:bin", work + "/bin/plain")] {
            #expect(try reason(["plain"], path: path) == .spawnFailed("permission denied: \(named)"), "PATH=\(path)")
        }
        #expect(try reason(["plain"], path: "/usr/bin") == .spawnFailed("command not found: plain"))
        // An executable later in PATH still runs.
        try "#!/bin/sh\nexit 6\n".write(toFile: directory.file("plain"), atomically: true, encoding: .utf8)
        #expect(chmod(directory.file("plain"), 0o755) == 0)
        #expect(try reason(["plain"], path: "bin:") == .exited(6))
        // A path: what exec says of it.
        #expect(try reason(["./bin/plain"], path: "/usr/bin") == .spawnFailed("cannot execute ./bin/plain: Permission denied"))
        #expect(try reason(["./bin"], path: "/usr/bin") == .spawnFailed("cannot execute ./bin: Permission denied"))
        #expect(try reason(["./nothere"], path: "/usr/bin") == .spawnFailed("cannot execute ./nothere: No such file or directory"))
    }

    @Test("Slurm's final states map to results; COMPLETING and RUNNING are not final")
    func stateMapping() {
        #expect(SlurmJobState("COMPLETED").result(exitStatus: .exited(0), waitStatus: 0) == .succeeded)
        #expect(SlurmJobState("FAILED").result(exitStatus: .exited(3), waitStatus: 3 << 8) == .failed(exitCode: 3))
        #expect(SlurmJobState("FAILED").result(exitStatus: nil, waitStatus: 9) == .signaled(signal: 9))
        #expect(SlurmJobState("FAILED").result(exitStatus: .spawnFailed("x"), waitStatus: 1 << 8) == .spawnFailed(reason: "x"))
        #expect(SlurmJobState("CANCELLED by 0").result(exitStatus: nil, waitStatus: nil) == .cancelled)
        #expect(SlurmJobState("TIMEOUT").result(exitStatus: nil, waitStatus: nil) == .timedOut)
        #expect(SlurmJobState("OUT_OF_MEMORY").result(exitStatus: nil, waitStatus: nil) == .failed(exitCode: 137))
        for state in ["NODE_FAIL", "BOOT_FAIL", "PREEMPTED"] {
            #expect(SlurmJobState(state).result(exitStatus: nil, waitStatus: nil) == .interrupted)
        }
        // An exit status written means the command ran to its end: Slurm's later word (the
        // node lost as it finished, a cancel too late) does not change its result.
        for state in ["NODE_FAIL", "BOOT_FAIL", "PREEMPTED", "CANCELLED", "TIMEOUT"] {
            #expect(SlurmJobState(state).result(exitStatus: .exited(0), waitStatus: nil) == .succeeded, "\(state)")
            #expect(SlurmJobState(state).result(exitStatus: .exited(4), waitStatus: nil) == .failed(exitCode: 4), "\(state)")
        }
        for state in ["PENDING", "RUNNING", "COMPLETING", "SUSPENDED", "CONFIGURING"] {
            #expect(!SlurmJobState(state).isFinal)
            #expect(SlurmJobState(state).result(exitStatus: nil, waitStatus: nil) == nil)
        }
    }

    @Test("squeue --json and sacct answers are parsed, end times included; anything else is not taken for one")
    func parsing() {
        let squeue = #"{"meta": {}, "errors": [], "jobs": [{"job_id": 12, "name": "orchd-3", "job_state": "FAILED", "exit_code": 768, "comment": "orchd job=3", "end_time": 1796000000}, {"job_id": 13, "name": "orchd-4", "job_state": "RUNNING", "comment": "", "end_time": 0}, {"job_id": 14, "name": "orchd-5", "job_state": ["COMPLETED"], "comment": "", "end_time": {"set": true, "number": 1796000001}}, {"name": "no id"}]}"#
        #expect(SlurmExecutor.parseSqueue(squeue) == [
            .init(number: 12, name: "orchd-3", state: "FAILED", exitCode: 768, comment: "orchd job=3", endTime: Date(timeIntervalSince1970: 1_796_000_000)),
            .init(number: 13, name: "orchd-4", state: "RUNNING", exitCode: nil, comment: ""),
            .init(number: 14, name: "orchd-5", state: "COMPLETED", exitCode: nil, comment: "", endTime: Date(timeIntervalSince1970: 1_796_000_001)),
        ])
        #expect(SlurmExecutor.parseSqueue("squeue: error: Unable to contact slurm controller") == nil)
        // squeue that cannot reach the controller exits 0 with errors and no jobs: not an
        // empty queue, which would read as every job gone.
        let unreachable = #"{"meta": {}, "errors": [{"description": "Failed while looking for jobs", "error_number": 1, "error": "Unable to contact slurm controller (connect failure)"}, {"error": "Socket timed out"}], "jobs": []}"#
        #expect(SlurmExecutor.parseSqueue(unreachable) == nil)
        #expect(SlurmExecutor.squeueErrors(unreachable) == "squeue reported: Failed while looking for jobs; Socket timed out")
        #expect(SlurmExecutor.squeueErrors(squeue) == nil)
        let answer = SlurmExecutor.parseSacct("FAILED|3:0|1796000000\n")
        #expect(answer?.state == SlurmJobState("FAILED") && answer?.waitStatus == 3 << 8)
        #expect(answer?.end == Date(timeIntervalSince1970: 1_796_000_000))
        // No end known (a job still running), or sacct without the field: no time.
        #expect(SlurmExecutor.parseSacct("RUNNING|0:0|Unknown\n")?.end == nil)
        #expect(SlurmExecutor.parseSacct("FAILED|3:0\n")?.end == nil)
        #expect(SlurmExecutor.parseSacct("") == nil)
        // With a job name, only a record of that name: a controller that lost its state gives
        // the same ID to other jobs. A record without the field counts as of that name.
        let reused = "COMPLETED|0:0|1796000100|foreign\nFAILED|2:0|1796000000|orchd-7\n"
        #expect(SlurmExecutor.parseSacct(reused, jobName: "orchd-7")?.waitStatus == 2 << 8)
        #expect(SlurmExecutor.parseSacct("COMPLETED|0:0|1796000100|foreign\n", jobName: "orchd-7") == nil)
        #expect(SlurmExecutor.parseSacct("FAILED|3:0|1796000000\n", jobName: "orchd-7")?.waitStatus == 3 << 8)
        #expect(SlurmExecutor.isUnreachable("sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)"))
        #expect(!SlurmExecutor.isUnreachable("sbatch: error: Batch job submission failed: Invalid partition name specified"))
    }

    @Test("recovery follows the job orchd submitted as the job's user, not one another user named and commented like it")
    func recoveryChecksTheUser() throws {
        let comment = SlurmExecutor.comment(job: JobID(rawValue: 42), attempt: 1, stateDirectory: "/var/lib/orchd")
        let squeue = """
            {"jobs": [
              {"job_id": 100, "name": "orchd-42", "job_state": "RUNNING", "comment": "\(comment)", "user_id": 1000},
              {"job_id": 101, "name": "orchd-42", "job_state": "COMPLETED", "exit_code": 0, "comment": "\(comment)", "user_id": 1001}
            ]}
            """
        let jobs = try #require(SlurmExecutor.parseSqueue(squeue))
        #expect(jobs.map(\.userID) == [1000, 1001])
        let found = SlurmExecutor.submittedEntry(in: jobs, job: JobID(rawValue: 42), attempt: 1, stateDirectory: "/var/lib/orchd", userID: 1000)
        #expect(found?.number == 100, "the forged later job 101 of uid 1001 must not be taken for it")
        // Only a forged one: Slurm has no job of orchd's for the attempt.
        #expect(SlurmExecutor.submittedEntry(in: [jobs[1]], job: JobID(rawValue: 42), attempt: 1, stateDirectory: "/var/lib/orchd", userID: 1000) == nil)
        #expect(SlurmExecutor.submittedEntry(in: jobs, job: JobID(rawValue: 42), attempt: 2, stateDirectory: "/var/lib/orchd", userID: 1000) == nil)
    }

    @Test("log paths become sbatch file name patterns; timeouts become whole minutes")
    func sbatchValues() {
        #expect(SlurmExecutor.filenamePattern("/logs/100%/7.out") == "/logs/100%%/7.out")
        #expect(SlurmExecutor.exitStatusPath(standardOutputPath: "/logs/0/7.2.out") == "/logs/0/7.2.exit")
        #expect(SlurmExecutor.timeLimit(microseconds: 2_000_000) == "1")
        #expect(SlurmExecutor.timeLimit(microseconds: 60_000_000) == "1")
        #expect(SlurmExecutor.timeLimit(microseconds: 60_000_001) == "2")
    }

    @Test("a queue option that would take orchd's next option for its value is refused, in every spelling; flags and values given with '=' are taken")
    func slurmOptionsWithoutTheirValue() {
        for option in ["--mail-user", "--account", "--acc", "-A", "-vA", "--mem", "--time", "-t", "-p", "--qos", "--no-such-option"] {
            #expect(QueuesInterface.slurmProblem(partition: nil, options: [option]) != nil, "\(option)")
        }
        for option in [
            "--mail-user=a@b", "--acc=x", "-Aproj", "-vAproj", "--mem=2G", "-t10", "--exclusive", "--exclusive=user", "--hold",
            "-H", "--contig", "--nice", "-vQ", "--spread-job",
        ] {
            #expect(QueuesInterface.slurmProblem(partition: nil, options: [option]) == nil, "\(option)")
        }
        for option in ["--version", "-V", "--help", "-h", "--usage", "--test-only", "--test", "-vh"] {
            #expect(QueuesInterface.slurmProblem(partition: nil, options: [option])?.contains("makes sbatch submit no job") == true, "\(option)")
        }
    }

    @Test("the job ID is read from sbatch's last line, after any notices; output without one gives none")
    func submittedJobID() {
        #expect(SlurmExecutor.submittedJobID(in: "42\n") == "42")
        #expect(SlurmExecutor.submittedJobID(in: "42;cluster\n") == "42")
        #expect(SlurmExecutor.submittedJobID(in: "sbatch: notice: site banner\n57\n\n") == "57")
        #expect(SlurmExecutor.submittedJobID(in: "slurm 22.05.8\n") == nil)
        #expect(SlurmExecutor.submittedJobID(in: "") == nil)
        #expect(SlurmExecutor.submittedJobID(in: "٤٢\n") == nil, "digits Slurm never prints")
    }

    @Test("a queue.NAME line of the configuration file sets the queue's executor; bad executor settings are refused naming the line")
    func configurationFile() throws {
        let contents = try ConfigurationFile.parse("""
            concurrency = 2
            queue.hpc = concurrency=3, executor=slurm, slurm-partition=batch, slurm-option=--mem=2G, slurm-option=--nodelist=a,b, slurm-option=--qos=low
            """, path: "orchd.conf")
        let hpc = try #require(contents.queues.first)
        #expect(contents.queues.count == 1 && hpc.name.rawValue == "hpc" && hpc.concurrency == 3)
        #expect(hpc.executor == QueueExecutorSettings.Change(
            executor: "slurm", slurmPartition: "batch", slurmOptions: ["--mem=2G", "--nodelist=a,b", "--qos=low"]))
        #expect(try ConfigurationFile.parse("queue.plain = concurrency=1", path: "orchd.conf").queues.first?.executor.isEmpty == true)
        for (text, fragment) in [
            ("queue.hpc = executor=kubernetes", "no executor 'kubernetes'"),
            ("queue.hpc = colour=red", "unknown queue setting 'colour'"),
            ("queue.hpc = slurm-option=--output=/tmp/x", "is set by orchd"),
            ("queue.hpc = slurm-option=--uid=0", "is set by orchd"),
            ("queue.hpc = slurm-option=--mail-user", "'--mail-user' takes a value in sbatch"),
            ("queue.hpc = slurm-option=--version", "makes sbatch submit no job"),
            ("queue.hpc = slurm-option=", "needs an sbatch option"),
            ("queue.hpc = executor=slurm, executor=local", "'executor' is given twice"),
            ("queue.hpc = concurrency=2, b", "expected 'setting=value'"),
            ("queue.hpc = executor=slurm\nqueue.hpc = executor=local", "is set again"),
        ] {
            #expect(throws: ConfigurationFileError.self) { try ConfigurationFile.parse(text, path: "orchd.conf") }
            do {
                _ = try ConfigurationFile.parse(text, path: "orchd.conf")
            } catch {
                #expect(error.description.contains(fragment), "\(error)")
            }
        }
    }
}
