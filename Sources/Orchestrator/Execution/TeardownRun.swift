import Dispatch
import Foundation

/// Runs a ``Teardown`` against one process group, driven by events and a timer.
///
/// Each step first checks whether the group is gone (``ProcessGroup/isGone``) and, if so,
/// ends the run. A `.wait` arms a `DispatchSourceTimer`; ``mainProcessExited()`` re-checks the
/// group at once, so a group that exits on `SIGTERM` ends the run without waiting out the
/// grace. No thread sleeps.
final class TeardownRun: @unchecked Sendable { // safe: mutable state is touched only on `queue`
    private let steps: [TeardownStep]
    private let group: ProcessGroup
    private let queue: DispatchQueue
    private var nextStep = 0
    private var timer: (any DispatchSourceTimer)?
    private var completion: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - teardown: the steps to run.
    ///   - group: the process group to signal.
    ///   - queue: a serial queue that owns the run's state and runs `completion`.
    init(teardown: Teardown, group: ProcessGroup, queue: DispatchQueue) {
        self.steps = teardown.steps
        self.group = group
        self.queue = queue
    }

    /// Starts the steps; `completion` runs once on the queue when the group is gone or the
    /// last step has run.
    func start(completion: @escaping @Sendable () -> Void) {
        queue.async {
            self.completion = completion
            self.advance()
        }
    }

    /// Tells the run the group's leader has exited; must be called on the queue. Ends the
    /// run now if nothing of the group is left.
    func mainProcessExited() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard completion != nil, group.isGone else { return }
        finish()
    }

    private func advance() {
        timer = nil
        while nextStep < steps.count {
            if group.isGone { break }
            let step = steps[nextStep]
            nextStep += 1
            switch step {
            case .signal(let signal):
                group.signal(signal)
            case .wait(let duration):
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + duration.dispatchInterval)
                timer.setEventHandler { [weak self] in self?.advance() }
                self.timer = timer
                timer.activate()
                return
            }
        }
        finish()
    }

    private func finish() {
        timer?.cancel()
        timer = nil
        nextStep = steps.count
        guard let completion else { return }
        self.completion = nil
        completion()
    }
}
