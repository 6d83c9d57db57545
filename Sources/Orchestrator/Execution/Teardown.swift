import Foundation

/// How to stop a job's process group, as data: a list of signals and waits, run in order and
/// stopped as soon as the group is gone (the swift-subprocess teardown sequence).
///
/// ```swift
/// let teardown = Teardown.standard(grace: .seconds(10)) // TERM, up to 10 s, KILL
/// ```
public struct Teardown: Hashable, Sendable {
    /// The steps, run in order.
    public var steps: [TeardownStep]

    /// Creates a teardown from its steps.
    /// - Parameter steps: the steps, run in order.
    public init(steps: [TeardownStep]) {
        self.steps = steps
    }

    /// `SIGTERM` to the group, up to `grace` for it to exit, then `SIGKILL` to the group.
    /// - Parameter grace: how long the group may take to exit after `SIGTERM` (default 5 s).
    /// - Returns: the three-step teardown.
    public static func standard(grace: Duration = .seconds(5)) -> Teardown {
        Teardown(steps: [.signal(SIGTERM), .wait(grace), .signal(SIGKILL)])
    }
}
