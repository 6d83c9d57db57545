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

extension JobsInterface.GetParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw(#"{"id":"#)
        writer.integer(id.rawValue)
        writer.raw("}")
    }
}

extension JobsInterface.IDsParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw(#"{"ids":"#)
        writer.array(ids)
        writer.raw("}")
    }
}

extension JobsInterface.ListParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        var first = true
        writer.raw("{")
        if let ids {
            writer.key("ids", first: &first)
            writer.array(ids)
        }
        if let queue {
            writer.key("queue", first: &first)
            writer.string(queue.rawValue)
        }
        if let state {
            writer.key("state", first: &first)
            writer.string(state)
        }
        if let limit {
            writer.key("limit", first: &first)
            writer.integer(limit)
        }
        if let allUsers {
            writer.key("allUsers", first: &first)
            writer.bool(allUsers)
        }
        if let result {
            writer.key("result", first: &first)
            writer.string(result)
        }
        if let labels {
            writer.key("labels", first: &first)
            writer.object(labels)
        }
        writer.raw("}")
    }
}

extension JobsInterface.CancelParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw(#"{"ids":"#)
        writer.array(ids)
        if let signal {
            writer.raw(#","signal":"#)
            writer.string(signal)
        }
        writer.raw("}")
    }
}

extension JobsInterface.CancelMatchingParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        var first = true
        writer.raw("{")
        if let queue {
            writer.key("queue", first: &first)
            writer.string(queue.rawValue)
        }
        if let state {
            writer.key("state", first: &first)
            writer.string(state)
        }
        if let signal {
            writer.key("signal", first: &first)
            writer.string(signal)
        }
        writer.raw("}")
    }
}

extension JobsInterface.LogsParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw(#"{"id":"#)
        writer.integer(id.rawValue)
        writer.raw(#","stream":"#)
        writer.string(stream.rawValue)
        if let offset {
            writer.raw(#","offset":"#)
            writer.integer(offset)
        }
        if let tailLines {
            writer.raw(#","tailLines":"#)
            writer.integer(tailLines)
        }
        if let follow {
            writer.raw(#","follow":"#)
            writer.bool(follow)
        }
        if let attempt {
            writer.raw(#","attempt":"#)
            writer.integer(attempt)
        }
        if let fromAttempt {
            writer.raw(#","fromAttempt":"#)
            writer.integer(fromAttempt)
        }
        writer.raw("}")
    }
}

extension JobsInterface.SubscribeParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        var first = true
        writer.raw("{")
        if let since {
            writer.key("since", first: &first)
            writer.integer(since)
        }
        if let follow {
            writer.key("follow", first: &first)
            writer.bool(follow)
        }
        if let queue {
            writer.key("queue", first: &first)
            writer.string(queue.rawValue)
        }
        if let jobId {
            writer.key("jobId", first: &first)
            writer.integer(jobId.rawValue)
        }
        writer.raw("}")
    }
}

extension JobsInterface.PruneParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        guard let olderThanUSec else { return writer.raw("{}") }
        writer.raw(#"{"olderThanUSec":"#)
        writer.integer(olderThanUSec)
        writer.raw("}")
    }
}

extension JobsInterface.RetryFailedParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        guard let queue else { return writer.raw("{}") }
        writer.raw(#"{"queue":"#)
        writer.string(queue.rawValue)
        writer.raw("}")
    }
}

extension QueuesInterface.NamesParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        guard let names else { return writer.raw("{}") }
        writer.raw(#"{"names":"#)
        writer.array(names.map(\.rawValue))
        writer.raw("}")
    }
}

extension QueuesInterface.WaitDrainedParameters: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw(#"{"name":"#)
        writer.string(name.rawValue)
        writer.raw("}")
    }
}
