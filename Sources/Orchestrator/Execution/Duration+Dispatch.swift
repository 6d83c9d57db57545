import Dispatch

extension Duration {
    /// This duration as a dispatch interval, in nanoseconds (rounded down, at least 0).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        return .nanoseconds(Int(clamping: nanoseconds))
    }
}
