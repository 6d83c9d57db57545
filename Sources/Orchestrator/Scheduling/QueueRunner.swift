import Foundation
import OrchestratorAPI

/// One orchd queue: its `OperationQueue`, its settings, its counts, and the jobs handed to it.
///
/// The scheduler feeds it from the store a window at a time, never more jobs than it has free
/// slots, so queued jobs stay rows in SQLite and priority order is decided at each start.
/// Confined to the control queue; the OperationQueue runs the operations on its own threads.
final class QueueRunner {
    let name: QueueName
    let operationQueue: OperationQueue
    /// The stored settings (`nil` fields: the daemon's defaults).
    var settings: QueueSettings
    /// How many of the queue's jobs are in each state.
    var counts = JobCounts()
    /// Jobs whose operation was created and has not reported its end.
    var inFlight: Set<JobID> = []
    /// The queue is declared (it has a row of settings). A runner that is not only counts the
    /// finished jobs of a removed queue: jobs cannot be submitted to it.
    var isDeclared = true
    /// How many of ``inFlight`` each user (submitter uid) owns.
    var runningByOwner: [UInt32: Int] = [:]
    /// The user whose job was started last, so that the next free slot goes to the next user.
    var lastServedOwner: UInt32?
    /// The most running jobs one user may have: the queue's own limit, else the daemon's;
    /// `nil`: none.
    var maxRunningPerUser: Int?

    /// How many jobs may run at once. Changing it takes effect at once; running jobs go on.
    var concurrency: Int {
        didSet { operationQueue.maxConcurrentOperationCount = concurrency }
    }

    /// Creates a runner.
    /// - Parameters:
    ///   - settings: the queue's stored settings.
    ///   - defaultConcurrency: used when the settings name none (at least 1).
    init(settings: QueueSettings, defaultConcurrency: Int, defaultMaxRunningPerUser: Int? = nil) {
        self.name = settings.name
        self.maxRunningPerUser = settings.maxRunningPerUser ?? defaultMaxRunningPerUser
        self.settings = settings
        self.concurrency = settings.concurrency ?? defaultConcurrency
        operationQueue = OperationQueue()
        operationQueue.name = "orchd.queue.\(settings.name)"
        operationQueue.maxConcurrentOperationCount = concurrency
    }

    /// Slots not taken by a job in flight; none while paused.
    var freeSlots: Int { settings.paused ? 0 : max(0, concurrency - inFlight.count) }

    /// Counts a job handed to the queue (`+1`) or ended (`-1`) for its owner.
    func noteRunning(_ owner: UInt32, _ change: Int) {
        let count = (runningByOwner[owner] ?? 0) + change
        runningByOwner[owner] = count > 0 ? count : nil
    }

    /// Picks the jobs to start from each user's next jobs: one per user in turn, starting
    /// after the user served last, skipping users at ``maxRunningPerUser``, until the free
    /// slots are taken or no user has a job left to start. Priority orders each user's own
    /// jobs (their candidates come in start order).
    /// - Parameter slots: how many to pick at most; ``freeSlots`` when `nil`.
    func chooseRoundRobin(_ candidates: [JobStore.OwnerCandidates], slots: Int? = nil) -> [JobID] {
        var slots = slots ?? freeSlots
        var running = runningByOwner
        // Rotated so that the user after the last one served comes first.
        let sorted = candidates.sorted { $0.owner < $1.owner }
        let start = lastServedOwner.flatMap { last in sorted.firstIndex { $0.owner > last } } ?? 0
        var turns = Array(sorted[start...] + sorted[..<start]).map { ($0.owner, $0.jobs[...]) }
        var chosen: [JobID] = []
        var progress = true
        while slots > 0 && progress {
            progress = false
            for index in turns.indices where slots > 0 {
                let owner = turns[index].0
                if let limit = maxRunningPerUser, running[owner, default: 0] >= limit { continue }
                guard let next = turns[index].1.popFirst() else { continue }
                chosen.append(next)
                running[owner, default: 0] += 1
                slots -= 1
                progress = true
            }
        }
        return chosen
    }

    /// The retry backoff of this queue.
    func retryPolicy(default standard: RetryPolicy) -> RetryPolicy {
        RetryPolicy(
            base: settings.retryBaseUSec.map(Duration.init(microseconds:)) ?? standard.base,
            cap: settings.retryCapUSec.map(Duration.init(microseconds:)) ?? standard.cap)
    }

    /// The queue as `orchctl queues` shows it.
    /// - Parameter perUser: include the running jobs by user (for admins).
    func info(default standard: RetryPolicy, perUser: Bool = false) -> QueueInfo {
        let policy = retryPolicy(default: standard)
        return QueueInfo(
            name: name, concurrency: concurrency, paused: settings.paused,
            retryBaseUSec: policy.base.microseconds, retryCapUSec: policy.cap.microseconds, jobs: counts,
            hooks: settings.hooks, maxRunningPerUser: maxRunningPerUser,
            runningPerUser: perUser ? Dictionary(uniqueKeysWithValues: runningByOwner.map { (String($0.key), $0.value) }) : nil)
    }
}
