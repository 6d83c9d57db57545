/// What an option's or argument's value must look like. The parser checks it, so a command
/// never sees a malformed value, and help shows it as the `<placeholder>`.
enum ValueKind: Hashable, Sendable {
    /// Any text.
    case text
    /// A whole number, possibly negative.
    case integer
    /// `KEY=VALUE` with a non-empty key.
    case keyValue
    /// A queue name (``QueueName``).
    case queueName
    /// A job ID: a positive integer.
    case jobID
    /// A systemd-style time span (`30s`, `5min`, `1h30min`, plain seconds).
    case timeSpan
    /// One of a fixed set of words.
    case choice([String])
}
