import CPosix
import Dispatch
import Foundation
import Orchestrator
import OrchestratorAPI
import Synchronization
import Testing
import TestWaitLimits

@Suite("JobOperation")
struct JobOperationTests {
    @Test("a job reports onStarted then onFinished with its exit result")
    func reportsStartThenResult() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let queue = OperationQueue()
        queue.addOperation(recorder.operation(fixture.request(["sh", "-c", "echo out; exit 3"]), fixture: fixture))
        _ = try recorder.waitForStart()
        #expect(try recorder.waitForFinish() == .failed(exitCode: 3))
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        #expect(fixture.text("out") == "out\n")
    }

    @Test("the end's time is when the job ended, not when a busy callback queue got to it")
    func endTimeIsTakenBeforeTheCallbackQueue() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let gate = fixture.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let queue = OperationQueue()
        queue.addOperation(recorder.operation(fixture.request(["sh", "-c", "read x < '\(gate)'; exit 0"]), fixture: fixture))
        _ = try recorder.waitForStart()
        // The control queue busy (a request waiting for a lock, say) while the job ends.
        recorder.callbackQueue.suspend()
        try release(gate: gate)
        // Finished once its end is enqueued, which the suspended queue has not run.
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        let resumedAt = Date()
        recorder.callbackQueue.resume()
        #expect(try recorder.waitForFinish() == .succeeded)
        let endedAt = try #require(recorder.endTimes.withLock { $0.last })
        #expect(endedAt <= resumedAt, "\(endedAt) is after the queue ran again, \(resumedAt)")
    }

    @Test("a spawn failure is reported as onStarted(failure) then spawnFailed")
    func spawnFailure() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let queue = OperationQueue()
        queue.addOperation(recorder.operation(fixture.request(["orchd-no-such-command-xyz"]), fixture: fixture))
        #expect(throws: LaunchError.self) { _ = try recorder.waitForStart() }
        #expect(try recorder.waitForFinish() == .spawnFailed(reason: "command not found: orchd-no-such-command-xyz"))
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
    }

    @Test("a queue with concurrency 2 never runs more than 2 of 6 jobs at once, and drains")
    func concurrencyLimit() throws {
        let fixture = try ExecutionFixture()
        let callbackQueue = DispatchQueue(label: "test.exec.control")
        // Touched only on callbackQueue.
        let counts = Mutex((running: 0, peak: 0, finished: 0, order: [String]()))
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        for index in 0..<6 {
            var request = fixture.request(["sh", "-c", "sleep 0.1"])
            request.standardOutputPath = fixture.path("out\(index)")
            request.standardErrorPath = fixture.path("err\(index)")
            queue.addOperation(JobOperation(
                jobID: JobID(rawValue: Int64(index + 1)), request: request, launcher: fixture.launcher,
                reaper: fixture.reaper, teardown: .standard(), callbackQueue: callbackQueue,
                onStarted: { _ in
                    counts.withLock { counts in
                        counts.running += 1
                        counts.peak = max(counts.peak, counts.running)
                        counts.order.append("start \(index)")
                    }
                },
                onFinished: { result, _ in
                    #expect(result == .succeeded)
                    counts.withLock { counts in
                        counts.running -= 1
                        counts.finished += 1
                        counts.order.append("finish \(index)")
                    }
                }))
        }
        // This thread is not the callback queue, so waiting cannot deadlock (docs/ARCHITECTURE.md, Patterns).
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        callbackQueue.sync {}  // the last onFinished was enqueued before its operation finished
        let final = counts.withLock { $0 }
        #expect(final.finished == 6)
        #expect(final.peak == 2)
        #expect(final.running == 0)
        for index in 0..<6 {
            let start = try #require(final.order.firstIndex(of: "start \(index)"))
            let finish = try #require(final.order.firstIndex(of: "finish \(index)"))
            #expect(start < finish)
        }
    }

    @Test("stop(.cancelled) tears down the whole process group and reports cancelled")
    func cancelKillsGroup() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let queue = OperationQueue()
        let operation = recorder.operation(fixture.request(["sh", "-c", "sleep 300 & sleep 300"]), fixture: fixture)
        queue.addOperation(operation)
        let process = try recorder.waitForStart()
        operation.stop(reason: .cancelled)
        #expect(try recorder.waitForFinish() == .cancelled)
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        // Nothing of the group runs. (Orphans may linger as zombies until init reaps them;
        // isGone counts those as gone, see ProcessGroup.isGone.)
        #expect(process.processGroup.isGone)
        let signalled = process.processGroup.signal(0)
        #expect(signalled == ESRCH || signalled == 0)
    }

    @Test("stop(.timedOut) on a job that ignores SIGTERM kills it with SIGKILL after the grace")
    func timeoutEscalatesToKill() throws {
        let fixture = try ExecutionFixture()
        let ready = fixture.path("ready")
        #expect(mkfifo(ready, 0o600) == 0)
        let recorder = JobRecorder()
        let queue = OperationQueue()
        let script = #"trap "" TERM; echo ready > "$1"; sleep 100"#
        let operation = recorder.operation(
            fixture.request(["sh", "-c", script, "sh", ready]), fixture: fixture,
            teardown: .standard(grace: .milliseconds(500)))
        queue.addOperation(operation)
        let process = try recorder.waitForStart()
        // The shell writes to the FIFO only after installing the trap: a ready marker.
        #expect(readFIFO(ready)?.trimmingCharacters(in: .newlines) == "ready")
        let clock = ContinuousClock()
        let stoppedAt = clock.now
        operation.stop(reason: .timedOut)
        #expect(try recorder.waitForFinish() == .timedOut)
        #expect(clock.now - stoppedAt >= .milliseconds(450), "SIGTERM was ignored, so only SIGKILL after the grace ends it")
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        #expect(process.processGroup.isGone)
    }

    @Test("a background child left when the main process exits is torn down; the result is the main process's")
    func leftoverChildIsTornDown() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let queue = OperationQueue()
        queue.addOperation(recorder.operation(fixture.request(["sh", "-c", "sleep 30 & echo hi"]), fixture: fixture))
        let process = try recorder.waitForStart()
        defer { process.processGroup.signal(SIGKILL) }
        #expect(try recorder.waitForFinish() == .succeeded)
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        #expect(fixture.text("out") == "hi\n")
        #expect(process.processGroup.isGone, "the leftover sleep was torn down before the job ended")
    }

    @Test("leftovers that exit on SIGTERM end the teardown's grace at once, without a cgroup too")
    func leftoverEndsGraceEarly() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let queue = OperationQueue()
        // An hour's grace: only the leftovers' own exit can end the job within the recorder's
        // safety timeout.
        let operation = recorder.operation(
            fixture.request(["sh", "-c", "sleep 30 & sleep 30 & echo hi"]), fixture: fixture,
            teardown: .standard(grace: .seconds(3600)))
        queue.addOperation(operation)
        let process = try recorder.waitForStart()
        defer { process.processGroup.signal(SIGKILL) }
        #expect(try recorder.waitForFinish() == .succeeded)
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        #expect(process.processGroup.isGone, "both leftovers were torn down before the job ended")
    }

    @Test("an operation cancelled before it starts reports cancelled and never spawns")
    func cancelledBeforeStart() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let operation = recorder.operation(fixture.request(["sh", "-c", "touch marker"]), fixture: fixture)
        operation.cancel()
        let queue = OperationQueue()
        queue.addOperation(operation)
        #expect(try recorder.waitForFinish() == .cancelled)
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        recorder.callbackQueue.sync {}
        #expect(recorder.launch.withLock { $0 } == nil, "onStarted is not called")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("marker")))
        #expect(operation.isFinished)
    }

    @Test("stop after the process exited on its own keeps the process's own result")
    func stopAfterExitKeepsResult() throws {
        let fixture = try ExecutionFixture()
        let recorder = JobRecorder()
        let queue = OperationQueue()
        let operation = recorder.operation(fixture.request(["sh", "-c", "exit 4"]), fixture: fixture)
        queue.addOperation(operation)
        #expect(try recorder.waitForFinish() == .failed(exitCode: 4))
        operation.stop(reason: .cancelled)
        #expect(queue.waitUntilAllOperationsAreFinished(timeout: ExecutionFixture.safetyTimeout), "an operation did not finish")
        recorder.callbackQueue.sync {}
        #expect(recorder.results.withLock { $0 } == [.failed(exitCode: 4)])
    }
}
