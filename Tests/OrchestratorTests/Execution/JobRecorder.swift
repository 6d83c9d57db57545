import Dispatch
import Foundation
import Orchestrator
import OrchestratorAPI
import Synchronization

/// Records a JobOperation's callbacks and lets a test wait for them (semaphores, with the
/// fixture's safety timeout; never a sleep).
final class JobRecorder: Sendable {
    let callbackQueue = DispatchQueue(label: "test.exec.callbacks")
    let started = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let launch = Mutex<Result<LaunchedProcess, LaunchError>?>(nil)
    let results = Mutex<[JobResult]>([])
    /// When each reported end says the job ended.
    let endTimes = Mutex<[Date]>([])

    /// Makes an operation whose callbacks are recorded here.
    func operation(
        _ request: LaunchRequest, fixture: ExecutionFixture, teardown: Teardown = .standard(), containment: Containment? = nil
    ) -> JobOperation {
        JobOperation(
            jobID: JobID(rawValue: 1), request: request, launcher: fixture.launcher, reaper: fixture.reaper,
            teardown: teardown, containment: containment, callbackQueue: callbackQueue,
            onStarted: { result in
                self.launch.withLock { $0 = result }
                self.started.signal()
            },
            onFinished: { result, endedAt in
                self.endTimes.withLock { $0.append(endedAt) }
                self.results.withLock { $0.append(result) }
                self.finished.signal()
            })
    }

    /// Waits for onStarted and returns the process it reported.
    func waitForStart() throws -> LaunchedProcess {
        guard started.wait(timeout: .now() + ExecutionFixture.safetyTimeout) == .success else {
            throw RecorderTimeout()
        }
        return try launch.withLock { try $0!.get() }
    }

    /// Waits for onFinished and returns the result.
    func waitForFinish() throws -> JobResult {
        guard finished.wait(timeout: .now() + ExecutionFixture.safetyTimeout) == .success else {
            throw RecorderTimeout()
        }
        return results.withLock { $0.last! }
    }
}
