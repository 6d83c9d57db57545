import Dispatch

/// A dispatch source held only to keep it alive until it fires.
struct RetainedSource: @unchecked Sendable { // safe: dispatch sources are thread-safe objects; Dispatch just does not mark them Sendable
    let source: any DispatchSourceRead
}
