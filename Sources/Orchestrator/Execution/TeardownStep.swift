/// One step of a ``Teardown``.
public enum TeardownStep: Hashable, Sendable {
    /// Send this signal (e.g. `SIGTERM`) to the whole process group, `kill(-pgid, signal)`
    /// (kill(2)).
    case signal(Int32)
    /// Give the group this long to exit before the next step; cut short when the group is
    /// gone.
    case wait(Duration)
}
