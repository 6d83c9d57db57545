import Dispatch

extension Duration {
    /// This duration as a dispatch interval, in nanoseconds (rounded down, at least 0, and at
    /// most `Int.max` nanoseconds, about 292 years: longer spans saturate instead of trapping).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let (wholeNanoseconds, overflow) = max(0, seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .nanoseconds(Int.max) }
        let (nanoseconds, sumOverflow) = wholeNanoseconds.addingReportingOverflow(max(0, attoseconds) / 1_000_000_000)
        return .nanoseconds(sumOverflow ? Int.max : Int(clamping: nanoseconds))
    }
}
