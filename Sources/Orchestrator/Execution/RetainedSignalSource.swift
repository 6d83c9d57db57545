import Dispatch

/// A signal source held to keep it alive.
struct RetainedSignalSource: @unchecked Sendable {  // dispatch sources are thread-safe; Dispatch does not mark them Sendable
    let source: any DispatchSourceSignal
}
