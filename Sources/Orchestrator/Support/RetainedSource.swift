import Dispatch

/// Holds a dispatch source (signal or timer; descriptors have ``EpollLoop``) where a `Sendable` value is required: in
/// a lock, or captured by a `@Sendable` closure that keeps the source alive or cancels it.
struct RetainedSource<Source>: @unchecked Sendable {  // holds a dispatch source only: they are thread-safe; Dispatch does not mark them Sendable
    /// The source.
    let source: Source
}
