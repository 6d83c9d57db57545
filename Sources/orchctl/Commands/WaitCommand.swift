import CommandLineParsing
import Dispatch
import FoundationEssentials
import OrchestratorAPI
import Synchronization

/// `orchctl wait (ID... | --all | --queue Q --drained) [--timeout SPAN]`: blocks until jobs
/// finish, or until a queue has nothing left to run.
enum WaitCommand: OrchctlCommand {
    static let name = "wait"
    static let spec = CommandSpec(
        name: name,
        abstract: "Wait until jobs finish or a queue drains.",
        discussion: "The wait is event-driven: orchd answers when the last job finishes. An ID that names no job, or another user's job, refuses the whole wait before anything is waited for (exit 1, or 77 for another user's). With one job, exits with its status as a shell would report it (the exit code, 128+SIGNAL when signaled, 124 when timed out, 127 when it could not start, 1 when cancelled); with several, 0 when all succeeded, else 1. When --timeout runs out first, exits 124 and the jobs go on. When orchd restarts meanwhile, orchctl says so once on standard error, reconnects for up to --reconnect-timeout and waits on for the same jobs.\n\nAn awaited job that is held (it starts only once released), or waits for a start time more than a minute ahead (--delay, --at, a retry backoff), is named on standard error as the wait begins, so that a long silence is not taken for a hang: 'orchctl: waiting for job 5, which may start no sooner than 04:06:30 (in 2h)'. One line per such job, at most five lines of each kind, the last counting the rest. Awaited jobs that wait in a paused queue get one line per queue ('orchctl: queue io is paused, so job 5 starts only once it is resumed (...)'), and so does a paused queue that --drained waits for while jobs wait in it, with its held and late jobs; submit --wait says the same of its job. Standard output is unchanged.\n\nWith --all, waits for every job not finished when it is called (jobs submitted later are not waited for), prints nothing on standard output, and exits 0 when all succeeded, else 1. A job that finishes and is pruned by retention before orchd is asked about it counts as finished; its result is gone and does not count.\n\nWith --queue Q --drained, waits until queue Q has no waiting, queued or running job (at once when it has none), including jobs submitted while it waits; prints nothing (the queue with --json) and exits 0 however its jobs ended.",
        usage: "wait (<id> ... | --all | --queue <queue> --drained) [--timeout <span>]",
        arguments: [ArgumentSpec(name: "id", kind: .jobID, arity: .zeroOrMore, help: "The jobs to wait for.")],
        options: Options.specs)

    /// `wait`'s options.
    struct Options: CommandOptions {
        var all = false
        var queue: QueueName?
        var drained = false
        var timeout: Duration?
        var reconnectTimeout: Duration?

        static let bindings: [OptionBinding<Options>] = [
            .flag(\.all, "all", help: "Wait for every job that has not finished yet."),
            .value(\.queue, "queue", "queue", kind: .queueName, help: "With --drained: the queue to wait for."),
            .flag(\.drained, "drained", help: "Wait until the --queue has no waiting, queued or running job."),
            .value(\.timeout, "timeout", "span", kind: .timeSpan,
                   help: "Give up after this long, e.g. 30s, 5min, 1h30min; 0 looks once without waiting.", default: "no limit"),
            .value(\.reconnectTimeout, "reconnect-timeout", "span", kind: .timeSpan, help: Reconnection.optionHelp, default: "1min"),
        ]
    }

    /// How many IDs go into one `Wait` call of `--all`, to keep calls and replies small.
    static let idsPerCall = 10_000

    /// What to wait for.
    enum Target: Hashable, Sendable {
        /// These jobs.
        case jobs([JobID])
        /// Every job unfinished now.
        case all
        /// A queue with no waiting, queued or running job.
        case drainedQueue(QueueName)
    }

    /// What `invocation` asks to wait for.
    /// - Throws: ``CommandLineError`` unless exactly one of IDs, `--all` and
    ///   `--queue Q --drained` is given, or when `--queue` and `--drained` come apart.
    static func target(of invocation: Invocation) throws(CommandLineError) -> Target {
        let options = Options(decoding: invocation)
        let queue = options.queue
        let drained = options.drained
        switch (queue, drained) {
        case (.some, false):
            throw CommandLineError(
                .missingArgument, "--queue needs --drained: 'wait --queue <queue> --drained' waits until the queue is empty", command: spec.name)
        case (nil, true):
            throw CommandLineError(.missingArgument, "--drained needs the queue to wait for: --queue <queue>", command: spec.name)
        default:
            break
        }
        let all = options.all
        let ids = invocation.jobIDs
        let given = [!ids.isEmpty, all, queue != nil].filter { $0 }.count
        guard given <= 1 else {
            throw CommandLineError(.conflictingOptions, "give one of job IDs, --all or --queue <queue> --drained", command: spec.name)
        }
        if let queue { return .drainedQueue(queue) }
        if all { return .all }
        guard !ids.isEmpty else {
            throw CommandLineError(.missingArgument, "missing argument '<id>' (or --all, or --queue <queue> --drained)", command: spec.name)
        }
        return .jobs(ids)
    }

    static func run(_ invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let target = try target(of: invocation)
        let socket = try context.socket(for: invocation)
        let uid = context.uid
        let reconnection = try Reconnection(context: context, invocation: invocation, timeout: Options(decoding: invocation).reconnectTimeout)
        let ids: [JobID]
        switch target {
        case .drainedQueue(let queue):
            return try waitDrained(queue, invocation: invocation, context: context)
        case .all:
            let connection = try OrchdConnection(socket: socket, uid: uid)
            let starts: [JobsInterface.JobStartsReply.JobStart]
            (ids, starts) = try unfinishedJobs(on: connection)
            noteLateStarts(starts, now: Date(), time: context.time, console: context.console)
            notePausedQueues(of: starts, on: connection, console: context.console)
        case .jobs(let given):
            // An ID given twice is waited for, and reported, once.
            var seen: Set<JobID> = []
            ids = given.filter { seen.insert($0).inserted }
        }
        let all = target == .all
        // Given IDs: their start times are asked on the connection the wait then uses, so an
        // orchd that goes away after that is one the wait reconnects to.
        let firstLook = FirstLook()
        let noteFirst: (@Sendable (OrchdConnection) -> Void)? = all ? nil : { @Sendable [ids, time = context.time, console = context.console] connection in
            let looked = waitingStarts(of: ids, on: connection)
            // No starts: orchd does not know (or show) every ID, and the wait reports why at once.
            firstLook.record(hasAnswer: looked?.allSatisfy { $0.state == "finished" } ?? false)
            let starts = looked ?? []
            noteLateStarts(starts, now: Date(), time: time, console: console)
            notePausedQueues(of: starts, on: connection, console: console)
        }
        if ids.isEmpty {
            if invocation.global.json { context.console.write(try JSONOutput.text([Job]())) }
            return .success
        }
        let timeout = Options(decoding: invocation).timeout
        if invocation.global.json {
            guard let jobs = try waitForAll(
                ids, all: all, timeout: timeout, firstLook: firstLook, reconnection: reconnection, noteFirst: noteFirst, method: JobsInterface.wait,
                { $0.jobs })
            else {
                context.console.printError("Error: timed out after \(TimeSpan.format(timeout ?? .zero)) waiting for \(describe(unfinished(ids, reconnection)))")
                return .timedOut
            }
            context.console.write(try JSONOutput.text(jobs))
            return all ? allSucceeded(jobs) : exitCode(for: jobs)
        }
        // The ID and state are all the text and the exit status need: whole jobs are not decoded.
        let waitForEnds = JobsInterface.wait.decodingReply(as: JobsInterface.JobEndsReply.self, reading: JobsInterface.JobEndsReply.read)
        guard let jobs = try waitForAll(
            ids, all: all, timeout: timeout, firstLook: firstLook, reconnection: reconnection, noteFirst: noteFirst, method: waitForEnds, { $0.jobs })
        else {
            context.console.printError("Error: timed out after \(TimeSpan.format(timeout ?? .zero)) waiting for \(describe(unfinished(ids, reconnection)))")
            return .timedOut
        }
        if !all {
            for job in jobs { context.console.print("\(job.id) \(JobText.state(job.state))") }
        }
        return all ? allSucceeded(jobs) : exitCode(for: jobs)
    }

    /// The jobs `ids` once all have finished, through `method`; `nil` when `timeout` ran out first.
    /// - Parameter noteFirst: given, runs on the first connection before the wait is asked.
    private static func waitForAll<Reply: Codable & Sendable, Found: WaitedJob>(
        _ ids: [JobID], all: Bool, timeout: Duration?, firstLook: FirstLook, reconnection: Reconnection, noteFirst: (@Sendable (OrchdConnection) -> Void)?,
        method: VarlinkMethod<JobsInterface.IDsParameters, Reply>, _ jobsOf: @escaping @Sendable (Reply) -> [Found]
    ) throws(CommandFailure) -> [Found]? {
        let body: @Sendable () throws(CommandFailure) -> [Found] = { () throws(CommandFailure) -> [Found] in
            var first: OrchdConnection?
            if let noteFirst {
                let connection = try OrchdConnection(socket: reconnection.socket, uid: reconnection.uid)
                noteFirst(connection)
                first = connection
            }
            return try wait(ids: ids, reconnection: reconnection, prunedAreFinished: all, method: method, on: first, jobsOf)
        }
        guard let timeout else { return try body() }
        return try waitWithDeadline(timeout: timeout, firstLook: noteFirst == nil ? nil : firstLook, body)
    }

    /// `--all`: 0 when every job succeeded, else 1.
    private static func allSucceeded(_ jobs: [some WaitedJob]) -> ExitCode {
        jobs.allSatisfy { $0.state.result == .succeeded } ? .success : .failure
    }

    /// `wait --queue Q --drained`: one `io.orchd.Queues.WaitDrained` call, which orchd answers
    /// once the queue has no waiting, queued or running job.
    static func waitDrained(_ queue: QueueName, invocation: Invocation, context: CommandContext) throws -> ExitCode {
        let reconnection = try Reconnection(context: context, invocation: invocation, timeout: Options(decoding: invocation).reconnectTimeout)
        let empty = noteWhatHoldsUp(queue, on: try context.connect(invocation), now: Date(), time: context.time, console: context.console)
        let waitForQueue: @Sendable () throws(CommandFailure) -> QueueInfo = { () throws(CommandFailure) -> QueueInfo in
            // After a restart of orchd the same question is asked again.
            try reconnection.run { (connection) throws(CommandFailure) -> QueueInfo in
                try connection.call(QueuesInterface.waitDrained, QueuesInterface.WaitDrainedParameters(name: queue)).queue
            }
        }
        let drained: QueueInfo
        // An empty queue is orchd's answer already, whatever the timeout (even 0).
        if let timeout = Options(decoding: invocation).timeout, !empty {
            guard let answer = try waitWithDeadline(timeout: timeout, waitForQueue) else {
                context.console.printError("Error: timed out after \(TimeSpan.format(timeout)) waiting for queue \(queue) to drain")
                return .timedOut
            }
            drained = answer
        } else {
            drained = try waitForQueue()
        }
        if invocation.global.json { context.console.write(try JSONOutput.text(drained)) }
        return .success
    }

    /// The IDs of every job waiting, queued or running now, and the earliest starts, holds and
    /// queues of the ones not running.
    static func unfinishedJobs(
        on connection: OrchdConnection
    ) throws(CommandFailure) -> (ids: [JobID], starts: [JobsInterface.JobStartsReply.JobStart]) {
        var starts: [JobsInterface.JobStartsReply.JobStart] = []
        // IDs (and, of those not started, start times and holds) only: a backlog of many jobs
        // is not decoded whole to learn their IDs.
        for state in ["waiting", "queued"] {
            try connection.stream(listStarts, JobsInterface.ListParameters(state: state)) { (reply) throws(CommandFailure) in
                starts += reply.jobs
            }
        }
        var ids = starts.map(\.id)
        let listIDs = JobsInterface.list.decodingReply(as: JobsInterface.JobIDsReply.self, reading: JobsInterface.JobIDsReply.read)
        try connection.stream(listIDs, JobsInterface.ListParameters(state: "running")) { (reply) throws(CommandFailure) in
            ids += reply.jobs.map(\.id)
        }
        // A job may move from one state to the next between the calls.
        return (Array(Set(ids)).sorted(), starts)
    }

    /// `List` read for each job's ID, state, earliest start and hold alone.
    private static let listStarts = JobsInterface.list.decodingReply(
        as: JobsInterface.JobStartsReply.self, reading: JobsInterface.JobStartsReply.read)

    /// The states, earliest starts, holds and queues of `ids`, asked on `connection`; with
    /// `everyOne`, none when orchd does not know (or show this caller) every one of them (the
    /// wait that follows reports why), else those it lists; `nil` when orchd could not be asked.
    static func waitingStarts(
        of ids: [JobID], on connection: OrchdConnection, everyOne: Bool = true
    ) -> [JobsInterface.JobStartsReply.JobStart]? {
        var starts: [JobsInterface.JobStartsReply.JobStart] = []
        do throws(CommandFailure) {
            try connection.stream(listStarts, JobsInterface.ListParameters(ids: ids)) { (reply) throws(CommandFailure) in
                starts += reply.jobs
            }
        } catch where error.remoteErrorName == nil {
            return nil
        } catch {
            return []
        }
        return !everyOne || Set(starts.map(\.id)) == Set(ids) ? starts : []
    }

    /// Says on standard error, once as `wait --queue Q --drained` begins, what keeps `queue` from
    /// draining that only a person can change: the queue is paused while jobs wait in it, or some
    /// of its jobs are held or may not start for more than a minute (as ``noteLateStarts(_:now:time:console:)``).
    /// Nothing when orchd cannot say (no such queue: the wait itself reports it).
    /// - Returns: whether the queue is drained already (no waiting, queued or running job).
    @discardableResult
    static func noteWhatHoldsUp(_ queue: QueueName, on connection: OrchdConnection, now: Date, time: TimeFormatter, console: Console) -> Bool {
        do throws(CommandFailure) {
            guard let info = try connection.call(QueuesInterface.list, QueuesInterface.NamesParameters(names: [queue])).queues.first else {
                return false
            }
            let notStarted = info.jobs.waiting + info.jobs.queued
            if info.paused, notStarted > 0 {
                let jobs = notStarted == 1 ? "1 of its jobs has" : "\(JobTable.grouped(notStarted)) of its jobs have"
                console.printError("orchctl: queue \(queue) is paused and \(jobs) not started: it drains only once it is resumed ('orchctl resume \(queue)')")
            }
            guard notStarted > 0 else { return info.jobs.running == 0 }
            var starts: [JobsInterface.JobStartsReply.JobStart] = []
            for state in [JobState.waiting.name, JobState.queued.name] {
                try connection.stream(listStarts, JobsInterface.ListParameters(queue: queue, state: state)) { (reply) throws(CommandFailure) in
                    starts += reply.jobs
                }
            }
            noteLateStarts(starts, now: now, time: time, console: console)
            return false
        } catch {
            return false
        }
    }

    /// Says on standard error, once as a wait begins, which awaited jobs wait in a paused queue:
    /// they start only once it is resumed, so the wait lasts until then. One line per paused
    /// queue, naming the job when it is one. Held jobs are left to ``noteLateStarts(_:now:time:console:)``;
    /// nothing is said when orchd cannot tell which queues are paused.
    static func notePausedQueues(of starts: [JobsInterface.JobStartsReply.JobStart], on connection: OrchdConnection, console: Console) {
        var waiting: [QueueName: [JobID]] = [:]
        for job in starts where !job.held && (job.state == JobState.waiting.name || job.state == JobState.queued.name) {
            if let queue = job.queue { waiting[queue, default: []].append(job.id) }
        }
        guard !waiting.isEmpty else { return }
        let queues: [QueueInfo]
        do throws(CommandFailure) {
            queues = try connection.call(QueuesInterface.list, QueuesInterface.NamesParameters(names: waiting.keys.sorted())).queues
        } catch {
            return
        }
        for queue in queues.filter(\.paused).sorted(by: { $0.name < $1.name }) {
            guard let ids = waiting[queue.name]?.sorted() else { continue }
            let jobs = ids.count == 1 ? "job \(ids[0]) starts" : "\(JobTable.grouped(ids.count)) awaited jobs start"
            console.printError("orchctl: queue \(queue.name) is paused, so \(jobs) only once it is resumed ('orchctl resume \(queue.name)')")
        }
    }

    /// How far ahead an awaited job's start must be for the wait to say so as it begins.
    static let lateStartSeconds: Double = 60
    /// The most lines of that note: beyond it, the last line counts the rest.
    static let mostLateStartLines = 5

    /// Says on standard error, once as the wait begins, which awaited jobs are held (they
    /// start only once released, so the wait would last until then) and which may not start
    /// for more than a minute (`--delay`, `--at`, a long retry backoff), so that the silence
    /// of a long wait is not taken for a hang. Held jobs first, then the late ones: one line
    /// per job in ID order, at most ``mostLateStartLines`` lines of each, the last of them
    /// counting the rest when there are more.
    static func noteLateStarts(_ starts: [JobsInterface.JobStartsReply.JobStart], now: Date, time: TimeFormatter, console: Console) {
        let held = starts.filter { $0.held && ($0.state == JobState.waiting.name || $0.state == JobState.queued.name) }
            .map(\.id).sorted()
        let listedHeld = held.count <= mostLateStartLines ? held[...] : held.prefix(mostLateStartLines - 1)
        for id in listedHeld {
            console.printError("orchctl: waiting for job \(id), which is held: it starts only once released ('orchctl release \(id)')")
        }
        if held.count > listedHeld.count {
            console.printError("orchctl: and for \(JobTable.grouped(held.count - listedHeld.count)) more held jobs")
        }
        let late = starts.filter { !$0.held }.compactMap { job -> (id: JobID, start: Date)? in
            guard job.state == JobState.waiting.name, let start = job.notBefore, start.timeIntervalSince(now) > lateStartSeconds else {
                return nil
            }
            return (job.id, start)
        }.sorted { $0.id < $1.id }
        func when(_ start: Date) -> String {
            // To the nearest minute: a job delayed by 2h, asked about a moment later, is 'in 2h'.
            let minutes = (start.timeIntervalSince(now) / 60).rounded()
            return "no sooner than \(time.clockAhead(start, now: now)) (in \(TimeSpan.format(.seconds(Int64(minutes) * 60))))"
        }
        let listed = late.count <= mostLateStartLines ? late[...] : late.prefix(mostLateStartLines - 1)
        for job in listed {
            console.printError("orchctl: waiting for job \(job.id), which may start \(when(job.start))")
        }
        let rest = late.dropFirst(listed.count)
        if let soonest = rest.map(\.start).min() {
            console.printError("orchctl: and for \(JobTable.grouped(rest.count)) more jobs, which may start \(when(soonest))")
        }
    }

    /// One job: its shell exit status; several: 0 when all succeeded, else 1.
    static func exitCode(for jobs: [some WaitedJob]) -> ExitCode {
        if jobs.count == 1, let result = jobs[0].state.result {
            return ExitCode(result.shellExitStatus)
        }
        return jobs.allSatisfy { $0.state.result == .succeeded } ? .success : .failure
    }

    /// Calls `io.orchd.Jobs.Wait` on `connection` (else a new one), in calls of at most
    /// ``idsPerCall`` IDs; it answers when all jobs have finished. When orchd restarts
    /// meanwhile, `reconnection` connects again and the wait goes on for the same IDs (the
    /// chunks already answered are kept).
    /// - Parameter prunedAreFinished: for `--all`, whose IDs were listed as unfinished: a job
    ///   that is gone by the time of the `Wait` (`NoSuchJob`) has finished and was pruned by
    ///   retention (pruning deletes finished jobs only), so the wait goes on without it. Its
    ///   result is gone with it and does not count towards the exit status.
    static func wait<Reply: Codable & Sendable, Found: WaitedJob>(
        ids: [JobID], reconnection: Reconnection, prunedAreFinished: Bool = false,
        method: VarlinkMethod<JobsInterface.IDsParameters, Reply>, on connection: OrchdConnection? = nil, _ jobsOf: (Reply) -> [Found]
    ) throws(CommandFailure) -> [Found] {
        var jobs: [Found] = []
        var chunks = stride(from: 0, to: ids.count, by: idsPerCall).map { Array(ids[$0..<min($0 + idsPerCall, ids.count)]) }
        try reconnection.run(with: connection) { (connection) throws(CommandFailure) in
            while !chunks.isEmpty {
                var pages: [Found] = []
                do throws(CommandFailure) {
                    // With `more`, the finished jobs come in pages: no reply outgrows the message cap.
                    try connection.stream(method, JobsInterface.IDsParameters(ids: chunks[0])) { (reply) throws(CommandFailure) in
                        pages += jobsOf(reply)
                    }
                } catch where prunedAreFinished && error.remoteErrorName == JobsInterface.Errors.noSuchJob {
                    guard let gone = error.remoteJobID, let index = chunks[0].firstIndex(of: gone) else { throw error }
                    chunks[0].remove(at: index)
                    if chunks[0].isEmpty { chunks.removeFirst() }
                    continue
                }
                jobs += pages
                chunks.removeFirst()
            }
        }
        return jobs
    }

    /// Runs `body` (a wait) on another thread, giving up after `timeout`.
    /// The client blocks in read(2) without a deadline of its own, so the deadline is kept
    /// here; on timeout the blocked thread is left behind and ends with the process.
    /// - Returns: what `body` returned, or `nil` when the timeout ran out first.
    /// - Parameter firstLook: given, what `body`'s first look found: when it shows that orchd
    ///   has the answer already (every job finished, or one it does not know), the answer is
    ///   given even past the deadline, so that `--timeout 0` on a finished job says how it
    ///   ended rather than that time ran out.
    private static func waitWithDeadline<Value: Sendable>(
        timeout: Duration, firstLook: FirstLook? = nil, _ body: @escaping @Sendable () throws(CommandFailure) -> Value
    ) throws(CommandFailure) -> Value? {
        let outcome = WaitOutcome<Value>()
        BlockingThread.start {
            let result = Result { () throws(CommandFailure) -> Value in try body() }
            outcome.result.withLock { $0 = result }
            outcome.done.signal()
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = min(seconds, Int64(Int.max / 1_000_000_000 - 1)) * 1_000_000_000 + attoseconds / 1_000_000_000
        if outcome.done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) != .success {
            guard let firstLook, firstLook.hasAnswer(within: FirstLook.patience) else { return nil }
            outcome.done.wait()
        }
        return try outcome.result.withLock { $0 }?.get()
    }

    /// The jobs of `ids` that have not finished, by a look on a connection of its own (the
    /// wait's may still be in its call), for a timeout to name only those; all of `ids` when
    /// the look fails or finds every one finished meanwhile.
    private static func unfinished(_ ids: [JobID], _ reconnection: Reconnection) -> [JobID] {
        guard let connection = try? OrchdConnection(socket: reconnection.socket, uid: reconnection.uid),
            let starts = waitingStarts(of: ids, on: connection, everyOne: false)
        else { return ids }
        // A job no longer listed was pruned (retention), so it had finished.
        let unfinished = Set(starts.filter { $0.state != JobState.finished(.succeeded).name }.map(\.id))
        var named: Set<JobID> = []
        let left = ids.filter { unfinished.contains($0) && named.insert($0).inserted }
        return left.isEmpty ? ids : left
    }

    private static func describe(_ ids: [JobID]) -> String {
        if ids.count > 10 { return "\(JobTable.grouped(ids.count)) jobs" }
        return ids.count == 1 ? "job \(ids[0])" : "jobs " + ids.map(\.description).joined(separator: ", ")
    }
}

/// The result of a wait running on another thread.
/// What a wait's first look at its jobs found, for a deadline that ran out before the answer
/// came: whether orchd has the answer already.
final class FirstLook: Sendable {
    /// How long a deadline that ran out waits for the first look itself.
    static let patience: DispatchTimeInterval = .seconds(5)
    private let looked = DispatchSemaphore(value: 0)
    private let answered = Atomic<Bool>(false)

    /// Records the look: whether every awaited job had finished, or orchd did not know one.
    func record(hasAnswer: Bool) {
        answered.store(hasAnswer, ordering: .sequentiallyConsistent)
        looked.signal()
    }

    /// Whether the look, once made (waiting for it at most `limit`), found the answer there.
    func hasAnswer(within limit: DispatchTimeInterval) -> Bool {
        guard looked.wait(timeout: .now() + limit) == .success else { return false }
        looked.signal()
        return answered.load(ordering: .sequentiallyConsistent)
    }
}

private final class WaitOutcome<Value: Sendable>: Sendable {
    let done = DispatchSemaphore(value: 0)
    /// Written before `done` is signalled, read after waiting on it; the lock lets the
    /// compiler check that.
    let result = Mutex<Result<Value, CommandFailure>?>(nil)
}

/// What a wait needs of each job it answers with: its ID and state (a whole ``Job`` for
/// `--json`, else a ``JobsInterface/JobEndsReply/JobEnd``).
protocol WaitedJob: Sendable {
    var id: JobID { get }
    var state: JobState { get }
}

extension Job: WaitedJob {}
extension JobsInterface.JobEndsReply.JobEnd: WaitedJob {}

