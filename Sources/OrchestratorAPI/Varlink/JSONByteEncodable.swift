/// A value that writes its own JSON with a ``JSONByteWriter``, bypassing `JSONEncoder`.
///
/// The daemon sends replies of such types through this path (the jobs of `Submit`, `Get`,
/// `List`, `Wait` and the other job replies), and everything else through `JSONEncoder`. A
/// conforming type's output must decode, through its `Decodable` conformance, to the same
/// value as its `Encodable` output does: same keys, `null` where `encode` writes one and no
/// key where `encodeIfPresent` leaves it out.
public protocol JSONByteEncodable {
    /// Appends the value's JSON to `writer`.
    func writeJSON(to writer: inout JSONByteWriter)
}

extension JSONByteEncodable {
    /// The value's JSON text.
    public var jsonBytes: [UInt8] {
        var writer = JSONByteWriter()
        writeJSON(to: &writer)
        return writer.bytes
    }
}

/// An array of values that write themselves writes itself (orchctl's `--json` output of jobs).
extension Array: JSONByteEncodable where Element: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.array(self)
    }
}
