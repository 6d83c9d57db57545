/// A callback did not arrive within the safety timeout.
struct RecorderTimeout: Error {}
