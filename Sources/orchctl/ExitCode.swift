/// A process exit status of `orchctl`, following sysexits(3) for the codes scripts act on.
///
/// Job outcomes (`submit --wait`, `wait`) pass the job's own status through, so any value
/// 0...255 can occur; the named constants are the ones orchctl itself decides.
struct ExitCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int32

    init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Everything worked.
    static let success = ExitCode(0)
    /// The request was carried out but failed: a job failed, a job does not exist.
    static let failure = ExitCode(1)
    /// `EX_USAGE`: the command line is wrong.
    static let usage = ExitCode(64)
    /// `EX_UNAVAILABLE`: orchd cannot be reached, or refused the connection.
    static let unavailable = ExitCode(69)
    /// `EX_NOPERM`: the caller may not do this.
    static let permissionDenied = ExitCode(77)
    /// `wait --timeout` ran out before the jobs finished; the value timeout(1) uses.
    static let timedOut = ExitCode(124)

    var description: String { String(rawValue) }
}
