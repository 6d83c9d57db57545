/// A framing failure: the peer sent something that cannot be a Varlink message.
public enum VarlinkFrameError: Error, Hashable, Sendable {
    /// A message exceeded the size cap (in bytes).
    case messageTooLarge(limitBytes: Int)
}
