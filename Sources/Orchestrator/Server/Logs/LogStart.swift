/// Where a `Logs` stream starts in the log file.
enum LogStart: Sendable, Equatable {
    /// At this byte offset; past the end means the end.
    case offset(Int64)
    /// Where the last this many lines begin (``LogTail``).
    case lastLines(Int)
}
