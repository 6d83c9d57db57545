/// The parameters of the calls orchctl makes for everyday commands write themselves (see
/// ``JSONByteEncodable``), so that a short-lived client never instantiates `JSONEncoder`'s
/// generic machinery for them: that was half of the instructions of `orchctl ping`, and most of
/// what `status`, `show`, `wait` and `cancel` spent past start-up on encoding one small call.
/// Each writes the keys its synthesized `Encodable` conformance writes, an absent optional left
/// out (`encodeIfPresent`); a test holds each to `JSONEncoder`'s output.

extension VarlinkNoParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw("{}")
    }

    /// Reads any JSON object as the `Decodable` conformance does (its members ignored), or
    /// gives up (`nil`) on anything else, a key given twice included.
    @Sendable public static func read(_ reader: inout JSONByteReader) -> VarlinkNoParameters? {
        reader.object { _, reader in reader.skipValue() } ? VarlinkNoParameters() : nil
    }
}

extension JSONByteWriter {
    /// Appends an object whose members `body` writes (`member(_:_:first:)`).
    mutating func object(_ body: (inout JSONByteWriter, inout Bool) -> Void) {
        var first = true
        raw("{")
        body(&self, &first)
        raw("}")
    }
}

extension JobsInterface.GetParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { $0.member("id", id.rawValue, first: &$1) }
    }
}

extension JobsInterface.IDsParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { $0.member("ids", ids, first: &$1) }
    }
}

extension JobsInterface.ListParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { writer, first in
            writer.member("ids", ids, first: &first)
            writer.member("queue", queue?.rawValue, first: &first)
            writer.member("state", state, first: &first)
            writer.member("limit", limit, first: &first)
            writer.member("allUsers", allUsers, first: &first)
            writer.member("result", result, first: &first)
            writer.member("labels", labels, first: &first)
        }
    }
}

extension JobsInterface.CancelParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { writer, first in
            writer.member("ids", ids, first: &first)
            writer.member("signal", signal, first: &first)
        }
    }
}

extension JobsInterface.CancelMatchingParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { writer, first in
            writer.member("queue", queue?.rawValue, first: &first)
            writer.member("state", state, first: &first)
            writer.member("signal", signal, first: &first)
        }
    }
}

extension JobsInterface.LogsParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { writer, first in
            writer.member("id", id.rawValue, first: &first)
            writer.member("stream", stream.rawValue, first: &first)
            writer.member("offset", offset, first: &first)
            writer.member("tailLines", tailLines, first: &first)
            writer.member("follow", follow, first: &first)
            writer.member("attempt", attempt, first: &first)
            writer.member("fromAttempt", fromAttempt, first: &first)
        }
    }
}

extension JobsInterface.SubscribeParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { writer, first in
            writer.member("since", since, first: &first)
            writer.member("follow", follow, first: &first)
            writer.member("queue", queue?.rawValue, first: &first)
            writer.member("jobId", jobId?.rawValue, first: &first)
            writer.member("resume", resume, first: &first)
        }
    }
}

extension JobsInterface.PruneParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { $0.member("olderThanUSec", olderThanUSec, first: &$1) }
    }
}

extension JobsInterface.RetryFailedParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { $0.member("queue", queue?.rawValue, first: &$1) }
    }
}

extension QueuesInterface.NamesParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { $0.member("names", names?.map(\.rawValue), first: &$1) }
    }
}

extension QueuesInterface.WaitDrainedParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { $0.member("name", name.rawValue, first: &$1) }
    }
}

extension ManagerInterface.UserNamesParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.object { writer, first in
            writer.key("uids", first: &first)
            writer.raw("[")
            for (index, uid) in uids.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.integer(uid)
            }
            writer.raw("]")
        }
    }
}
