import Dispatch

/// A timer source held to keep it alive.
struct RetainedTimer: @unchecked Sendable {  // dispatch sources are thread-safe; Dispatch does not mark them Sendable
    let source: any DispatchSourceTimer
}
