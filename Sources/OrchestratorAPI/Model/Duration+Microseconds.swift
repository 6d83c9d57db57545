/// The one conversion between `Duration` and the whole microseconds that the wire protocol,
/// the store and systemd (`*_USEC`) use.
///
/// Microseconds to `Duration` is ``Swift/Duration/init(microseconds:)``: exact for every
/// `Int64`. `Duration` to microseconds is ``Swift/Duration/microseconds``: rounded toward
/// zero, saturating at the `Int64` bounds (about 292,000 years) instead of trapping.
extension Duration {
    /// A duration of `microseconds` µs, exactly (a `Duration` holds any `Int64` of them).
    /// - Parameter microseconds: the span in microseconds; negative for a negative span.
    public init(microseconds: Int64) {
        self = .microseconds(microseconds)
    }

    /// The duration in whole microseconds, rounded toward zero; `Int64.max` (`Int64.min`)
    /// for a span too long (too negative) to count in `Int64` microseconds.
    public var microseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        // `components` gives both parts the same sign, so the sum overflows toward that sign.
        let (total, sumOverflow) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        guard !overflow, !sumOverflow else { return seconds < 0 || attoseconds < 0 ? .min : .max }
        return total
    }

    /// The duration in seconds, as a `Double` (`TimeInterval`), for `Date` arithmetic.
    public var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
