import FoundationEssentials
import OrchestratorAPI

/// Writes a reply message without `JSONEncoder` when its parameters write themselves
/// (``JSONByteEncodable``): the replies carrying jobs, which are most of what the daemon
/// sends. The bytes are what `JSONEncoder` with `.sortedKeys` writes for the same
/// `VarlinkReply`.
enum DirectReplyEncoder {
    /// The reply message `{"continues":true,"parameters":…}` (without `continues` when it is
    /// `false`), or `nil` when `parameters` does not write itself and needs `JSONEncoder`.
    static func message<Parameters>(_ parameters: Parameters, continues: Bool) -> Data? {
        guard let parameters = parameters as? any JSONByteEncodable else { return nil }
        var writer = JSONByteWriter(capacity: 1024)
        if continues {
            writer.raw(#"{"continues":true,"parameters":"#)
        } else {
            writer.raw(#"{"parameters":"#)
        }
        writer.value(parameters)
        writer.raw("}")
        return Data(writer.bytes)
    }
}
