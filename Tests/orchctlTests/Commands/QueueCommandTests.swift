import CommandLineParsing
import FoundationEssentials
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("Queue commands")
struct QueueCommandTests {
    func queue(_ name: String, paused: Bool = false, hooks: [String: String] = [:]) -> QueueInfo {
        QueueInfo(name: QueueName(rawValue: name)!, concurrency: 2, paused: paused, retryBaseUSec: 1_000_000,
                  retryCapUSec: 600_000_000, jobs: JobCounts(waiting: 1, queued: 12, running: 2, finished: 140),
                  hooks: hooks)
    }

    @Test("queue set needs at least one setting, and sends the ones given")
    func setNeedsASetting() throws {
        let error = #expect(throws: CommandLineError.self) { try QueueSetCommand.makeParameters(try invocation(["queue", "set", "build"])) }
        #expect(error?.message == "nothing to change: give --concurrency, --retry-base, --retry-cap, --on, --max-running-per-user, --executor, --slurm-partition or --slurm-option")
        #expect(error?.command == "queue set")
        let parameters = try QueueSetCommand.makeParameters(try invocation(["queue", "set", "build", "--retry-base", "10s", "--concurrency", "4"]))
        #expect(parameters.name.rawValue == "build")
        #expect(parameters.concurrency == 4)
        #expect(parameters.retryBaseUSec == 10_000_000)
        #expect(parameters.retryCapUSec == nil)

        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", "/nonexistent", "queue", "set", "build"], context: testContext(capture)) == .usage)
        #expect(capture.standardError.hasSuffix("See 'orchctl queue set --help'.\n"))
    }

    @Test("queues shows a table with counts and retry backoff")
    func table() {
        #expect(QueueText.table([queue("default"), queue("io", paused: true)]) == """
            NAME     CONCURRENCY  PAUSED  RUNNING  QUEUED  WAITING  FINISHED  RETRY BASE/CAP
            default  2            no      2        12      1        140       1s/10min
            io       2            yes     2        12      1        140       1s/10min

            """)
        #expect(QueueText.table([]) == "No queues.\n")
        #expect(QueueText.settings(queue("io")) == """
            queue:       io
            concurrency: 2
            paused:      no
            retry base:  1s
            retry cap:   10min

            """)
    }

    @Test("the per-user table says RUNNING - where orchd sent no counts (to a user who is no admin), 0 where it sent none running")
    func perUserCounts() {
        let counts = JobCounts(waiting: 0, queued: 3, running: 2, finished: 0)
        let hidden = QueueInfo(
            name: QueueName(rawValue: "fs")!, concurrency: 4, paused: false, retryBaseUSec: 1_000_000, retryCapUSec: 300_000_000,
            jobs: counts, maxRunningPerUser: 1)
        #expect(QueueText.perUserTable([hidden], userNames: [:]) == "\nQUEUE  USER  RUNNING  LIMIT\nfs     -     -        1\n")
        var none = hidden
        none.runningPerUser = [:]
        #expect(QueueText.perUserTable([none], userNames: [:]) == "\nQUEUE  USER  RUNNING  LIMIT\nfs     -     0        1\n")
    }

    @Test("names orchd will not give (an older orchd, or a caller who is no admin) leave the uids shown; any other error fails the command")
    func userNamesRefused() throws {
        for error in ["org.varlink.service.MethodNotFound", "org.varlink.service.PermissionDenied"] {
            let orchd = try FakeOrchd(replies: [#"{"error":"\#(error)","parameters":{}}"#])
            let connection = try OrchdConnection(socket: orchd.socketPath, uid: 1000)
            #expect(try connection.userNames([0, 1000]) == [:], "\(error)")
        }
        let orchd = try FakeOrchd(replies: [#"{"error":"io.orchd.Jobs.StorageFailure","parameters":{"message":"disk"}}"#])
        let connection = try OrchdConnection(socket: orchd.socketPath, uid: 1000)
        #expect(throws: CommandFailure.self) { try connection.userNames([0]) }
        let named = try FakeOrchd(replies: [#"{"parameters":{"names":{"0":"root"}}}"#])
        #expect(try OrchdConnection(socket: named.socketPath, uid: 1000).userNames([0, 4242]) == [0: "root"])
    }

    @Test("the per-user table names each owner by the login name orchd gave, and by uid where it gave none")
    func perUserNames() {
        var queue = QueueInfo(
            name: QueueName(rawValue: "fs")!, concurrency: 4, paused: false, retryBaseUSec: 1_000_000, retryCapUSec: 300_000_000,
            jobs: JobCounts(waiting: 0, queued: 0, running: 3, finished: 0), maxRunningPerUser: 2)
        queue.runningPerUser = ["1000": 2, "4242": 1]
        #expect(QueueText.perUserOwners([queue]) == [1000, 4242])
        #expect(QueueText.perUserTable([queue], userNames: [1000: "alice"]) == """

            QUEUE  USER   RUNNING  LIMIT
            fs     alice  2        2
            fs     4242   1        2

            """)
    }

    @Test("queue set --on sends hooks by event kind; a later --on for the same event wins")
    func hooks() throws {
        let parameters = try QueueSetCommand.makeParameters(try invocation([
            "queue", "set", "builds", "--on", #"failed=notify-send "job $ORCHD_JOB_ID failed""#,
            "--on=succeeded=echo ok", "--on", "succeeded=echo done", "--on", "started=a=b",
        ]))
        #expect(parameters.hooks == [
            "failed": #"notify-send "job $ORCHD_JOB_ID failed""#, "succeeded": "echo done", "started": "a=b",
        ])
        #expect(parameters.concurrency == nil)
        // Without --on, hooks are left alone: the field is not sent at all.
        #expect(try QueueSetCommand.makeParameters(try invocation(["queue", "set", "b", "--concurrency", "1"])).hooks == nil)
    }

    @Test("queue set --on EVENT= with an empty command sends an empty command, which removes the hook")
    func hookRemoval() throws {
        let parameters = try QueueSetCommand.makeParameters(try invocation(["queue", "set", "builds", "--on", "failed="]))
        #expect(parameters.hooks == ["failed": ""])
    }

    @Test("queue set --on refuses an unknown event kind, listing the valid ones, and a value without '='")
    func hookErrors() {
        let unknown = parseError(["queue", "set", "builds", "--on", "exploded=true"])
        #expect(unknown?.code == .invalidValue)
        #expect(unknown?.command == "queue set")
        #expect(unknown?.message == "invalid value for option '--on': 'exploded' is not one of cancelled, failed, finished, queue_drained, retrying, started, succeeded")
        let noEquals = parseError(["queue", "set", "builds", "--on", "failed"])
        #expect(noEquals?.code == .invalidValue)
        #expect(noEquals?.message == "invalid value for option '--on': 'failed' is not of the form EVENT=COMMAND")
        #expect(parseError(["queue", "set", "builds", "--on", "=echo"])?.code == .invalidValue)
        #expect(parseError(["queue", "set", "builds", "--on"])?.code == .missingValue)

        let capture = CapturedConsole()
        #expect(Orchctl.run(["queue", "set", "builds", "--on", "exploded=true"], context: testContext(capture)) == .usage)
        #expect(capture.standardError.hasPrefix("Error: invalid value for option '--on': 'exploded' is not one of cancelled,"))
        #expect(capture.standardError.hasSuffix("See 'orchctl queue set --help'.\n"))
    }

    @Test("every hook event orchd accepts is offered by --on, and help explains hooks")
    func hookHelp() {
        #expect(Set(QueueSetCommand.hookEvents) == QueuesInterface.hookEvents)
        let text = Orchctl.helpRenderer.help(for: QueueSetCommand.spec)
        #expect(text.contains("  --on <event=command>"))
        for variable in ["ORCHD_JOB_ID", "ORCHD_QUEUE", "ORCHD_EVENT", "ORCHD_RESULT", "ORCHD_EXIT_CODE",
                         "ORCHD_JOB_NAME", "ORCHD_COMMAND", "ORCHD_ATTEMPT", "/bin/sh -c", "60s"] {
            #expect(text.contains(variable), "\(variable)")
        }
        #expect(text.contains(#"\#norchctl queue set builds --on failed='logger "job $ORCHD_JOB_ID $ORCHD_RESULT"'\#n"#))
        for line in HookEvent.helpLines {
            // Wrapped lines are checked by their first words: the line starts a new line.
            #expect(text.contains("\n" + line.prefix(40)), "\(line)")
        }
        let group = Orchctl.helpRenderer.help(for: QueueCommand.spec)
        #expect(group.contains("\nfailed: every unsuccessful final result but cancelled"))
    }

    @Test("queues lists hooks under the table, one per line; none, no extra lines")
    func tableWithHooks() {
        let queues = [
            queue("builds", hooks: ["succeeded": "echo ok", "failed": #"notify-send "job $ORCHD_JOB_ID failed""#]),
            queue("default"),
            queue("io", hooks: ["queue_drained": "printf 'a\nb'"]),
        ]
        #expect(QueueText.table(queues) == #"""
            NAME     CONCURRENCY  PAUSED  RUNNING  QUEUED  WAITING  FINISHED  RETRY BASE/CAP
            builds   2            no      2        12      1        140       1s/10min
            default  2            no      2        12      1        140       1s/10min
            io       2            no      2        12      1        140       1s/10min

            QUEUE   HOOK           COMMAND
            builds  failed         notify-send "job $ORCHD_JOB_ID failed"
            builds  succeeded      echo ok
            io      queue_drained  printf 'a\nb'

            """#)
        #expect(QueueText.hooksTable([queue("default")]) == "")
        #expect(QueueText.settings(queue("builds", hooks: ["succeeded": "echo ok", "failed": "false"])) == """
            queue:        builds
            concurrency:  2
            paused:       no
            retry base:   1s
            retry cap:    10min
            on failed:    false
            on succeeded: echo ok

            """)
    }

    @Test("queues --json carries each queue's hooks")
    func jsonWithHooks() throws {
        let queues = [queue("builds", hooks: ["failed": "echo $ORCHD_JOB_ID"]), queue("default")]
        let text = try JSONOutput.text(queues)
        #expect(text.contains(#""failed" : "echo $ORCHD_JOB_ID""#))
        let decoded = try JSONDecoder().decode([QueueInfo].self, from: Data(text.utf8))
        #expect(decoded.map(\.hooks) == [["failed": "echo $ORCHD_JOB_ID"], [:]])
    }

    @Test("queue add and queue set take --slurm-option's sbatch option as the next word, unless it is one of orchctl's own options")
    func slurmOptionSpaceForm() throws {
        for command in ["add", "set"] {
            let parameters = try QueueSetCommand.makeParameters(try invocation([
                "queue", command, "hpc", "--executor", "slurm", "--slurm-option", "--mem=2G", "--slurm-option=--qos=low",
                "--slurm-option", "-N1", "--concurrency", "3",
            ]))
            #expect(parameters.executor == "slurm" && parameters.concurrency == 3)
            #expect(parameters.slurmOptions == ["--mem=2G", "--qos=low", "-N1"])
        }
        for words in [["--slurm-option", "--concurrency", "3"], ["--slurm-option", "--json"], ["--slurm-option"]] {
            let error = #expect(throws: CommandLineError.self) { try invocation(["queue", "set", "hpc"] + words) }
            #expect(error?.message == "missing value for option '--slurm-option <option>'", "\(words)")
        }
    }

    @Test("pause and resume say what changed")
    func changes() {
        let before = [queue("a"), queue("b", paused: true)]
        let after = [queue("a", paused: true), queue("b", paused: true)]
        #expect(QueuePausing.changes(before: before, after: after, pause: true) == "paused a\nb was already paused\n")
        let resumed = [queue("a"), queue("b")]
        #expect(QueuePausing.changes(before: [queue("a", paused: true), queue("b")], after: resumed, pause: false) == "resumed a\nb was not paused\n")
        #expect(QueuePausing.changes(before: [], after: [queue("new", paused: true)], pause: true) == "paused new\n")
        #expect(QueuePausing.changes(before: [], after: [], pause: false) == "No queues to resume.\n")
        // Every queue (no names): only what changed, or one line when nothing did.
        #expect(QueuePausing.changes(before: [queue("a", paused: true), queue("b")], after: resumed, pause: false, named: false) == "resumed a\n")
        #expect(QueuePausing.changes(before: resumed, after: resumed, pause: false, named: false) == "No queue was paused.\n")
        #expect(QueuePausing.changes(before: after, after: after, pause: true, named: false) == "Every queue was already paused.\n")
    }

    @Test("prune counts jobs")
    func prune() {
        #expect(PruneCommand.message(pruned: 0) == "pruned 0 jobs")
        #expect(PruneCommand.message(pruned: 1) == "pruned 1 job")
        #expect(PruneCommand.message(pruned: 12) == "pruned 12 jobs")
    }
}
