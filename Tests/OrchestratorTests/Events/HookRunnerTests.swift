import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Hook runner")
struct HookRunnerTests {
    private func event(_ kind: EventKind, result: String?, exitCode: Int32? = nil, signal: Int32? = nil) -> Event {
        Event(seq: 9, at: Date(), kind: kind, jobId: JobID(rawValue: 7), queue: .default, state: "finished",
              result: result, exitCode: exitCode, signal: signal, attempt: 1)
    }

    @Test("ORCHD_EVENT names the hook's event and ORCHD_RESULT the result; an exit code only when the process exited")
    func environment() {
        let failed = HookRunner.environment(for: event("finished", result: "failed", exitCode: 5), hookEvent: "failed", queue: .default, job: nil)
        #expect(failed["ORCHD_EVENT"] == "failed")
        #expect(failed["ORCHD_RESULT"] == "failed")
        #expect(failed["ORCHD_EXIT_CODE"] == "5")
        #expect(failed["ORCHD_SIGNAL"] == nil)
        #expect(failed["ORCHD_JOB_ID"] == "7")

        let interrupted = HookRunner.environment(for: event("finished", result: "interrupted"), hookEvent: "failed", queue: .default, job: nil)
        #expect(interrupted["ORCHD_RESULT"] == "interrupted")
        #expect(interrupted["ORCHD_EXIT_CODE"] == nil, "no empty exit code for a job that never exited")

        // A stale exit code on an event whose result has none is never passed on.
        let timedOut = HookRunner.environment(for: event("finished", result: "timed_out", exitCode: 143), hookEvent: "failed", queue: .default, job: nil)
        #expect(timedOut["ORCHD_EXIT_CODE"] == nil)

        let signaled = HookRunner.environment(for: event("finished", result: "signaled", signal: 9), hookEvent: "finished", queue: .default, job: nil)
        #expect(signaled["ORCHD_EVENT"] == "finished")
        #expect(signaled["ORCHD_SIGNAL"] == "9")
        #expect(signaled["ORCHD_EXIT_CODE"] == nil)

        let succeeded = HookRunner.environment(for: event("finished", result: "succeeded", exitCode: 0), hookEvent: "succeeded", queue: .default, job: nil)
        #expect(succeeded["ORCHD_EXIT_CODE"] == "0")
    }

    @Test("a hook that did not succeed is logged with its exit status or signal, since its output is discarded")
    func failedHookDescription() {
        #expect(HookRunner.describe(.failed(exitCode: 127)) == "failed with exit status 127 (command not found) (its output goes to /dev/null)")
        #expect(HookRunner.describe(.failed(exitCode: 2)) == "failed with exit status 2 (its output goes to /dev/null)")
        #expect(HookRunner.describe(.signaled(signal: 9)) == "signaled (signal 9)")
        #expect(HookRunner.describe(.timedOut) == "timed_out")
    }

    @Test("the runner takes its hook events from the one table")
    func kindsFromTable() {
        #expect(HookRunner.hookKinds(of: event("finished", result: "interrupted")) == ["finished", "failed"])
        #expect(HookRunner.hookKinds(of: event("cancelled", result: "cancelled")) == ["finished", "cancelled"])
        #expect(HookRunner.hookKinds(of: event("finished", result: "succeeded")) == ["finished", "succeeded"])
    }
}
