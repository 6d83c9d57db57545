/// What an option's or argument's value must look like. The parser checks it, so a command
/// never sees a malformed value, and help shows it as the `<placeholder>`.
public enum ValueKind: Hashable, Sendable {
    /// Any text.
    case text
    /// A file system path: any text but the empty one, which is a mistake (an unset shell
    /// variable), never a request for the default.
    case path
    /// A whole number, possibly negative.
    case integer
    /// A whole number within a range (`--retries` 0...999, `--limit` 1 or more).
    case integerIn(ClosedRange<Int>)
    /// `KEY=VALUE` with a non-empty key.
    case keyValue
    /// `KEY=VALUE` whose key is one of a fixed set of words; the value may be empty
    /// (`queue set --on failed=COMMAND`, where `failed=` removes the hook).
    case keyedValue(keys: [String])
    /// A queue name (``QueueName``).
    case queueName
    /// A job ID: a positive integer.
    case jobID
    /// A systemd-style time span (`30s`, `5min`, `1h30min`, plain seconds).
    case timeSpan
    /// A time span within a range (orchd's `--sync-interval`, 1ms to 1h).
    case timeSpanIn(ClosedRange<Duration>)
    /// When a job may start: RFC 3339, a local date and time, or `HH:MM[:SS]` local time
    /// (``StartTime``).
    case startTime
    /// One of a fixed set of words.
    case choice([String])
    /// Text that a rule of the declaring program accepts (``TextRule``): for a value whose
    /// syntax belongs to the type that reads it (orchd's `--allow-users`).
    case rule(TextRule)
}
