import OrchestratorAPI

/// An option's or argument's value, converted once by the parser according to its
/// ``ValueKind``: commands receive these typed values, never the text again.
public enum ParsedValue: Hashable, Sendable {
    /// Any text, or one word of a fixed choice.
    case text(String)
    /// A whole number.
    case integer(Int)
    /// `KEY=VALUE`.
    case keyValue(key: String, value: String)
    /// A queue name.
    case queueName(QueueName)
    /// A job ID.
    case jobID(JobID)
    /// A time span, in microseconds.
    case timeSpan(microseconds: Int64)
    /// When a job may start.
    case startTime(StartTime)
}

/// A type an option's value can be decoded into (``OptionBinding``): the typed field of a
/// command's options.
public protocol OptionValue: Sendable {
    /// The value, when `parsed` is of this type's kind; `nil` is a declaration that pairs a
    /// field with the wrong ``ValueKind``, a programming error.
    init?(parsed: ParsedValue)
}

extension String: OptionValue {
    public init?(parsed: ParsedValue) {
        guard case .text(let text) = parsed else { return nil }
        self = text
    }
}

extension Int: OptionValue {
    public init?(parsed: ParsedValue) {
        guard case .integer(let number) = parsed else { return nil }
        self = number
    }
}

extension Int64: OptionValue {
    /// A time span in microseconds, or a whole number.
    public init?(parsed: ParsedValue) {
        switch parsed {
        case .timeSpan(let microseconds): self = microseconds
        case .integer(let number): self = Int64(number)
        default: return nil
        }
    }
}

extension QueueName: OptionValue {
    public init?(parsed: ParsedValue) {
        guard case .queueName(let name) = parsed else { return nil }
        self = name
    }
}

extension JobID: OptionValue {
    public init?(parsed: ParsedValue) {
        guard case .jobID(let id) = parsed else { return nil }
        self = id
    }
}

extension StartTime: OptionValue {
    public init?(parsed: ParsedValue) {
        guard case .startTime(let start) = parsed else { return nil }
        self = start
    }
}

extension Duration: OptionValue {
    /// A time span.
    public init?(parsed: ParsedValue) {
        guard case .timeSpan(let microseconds) = parsed else { return nil }
        self = Duration(microseconds: microseconds)
    }
}
