/// The replies that carry jobs, and `Subscribe`'s events, write themselves (see ``JSONByteEncodable``), keys in
/// `.sortedKeys` order; their optional fields are left out when absent, as the synthesized
/// `Encodable` conformance does.

extension JobsInterface.JobReply: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw("{")
        if let attempts {
            writer.raw(#""attempts":"#)
            writer.array(attempts)
            writer.raw(",")
        }
        if let existing {
            writer.raw(#""existing":"#)
            writer.bool(existing)
            writer.raw(",")
        }
        writer.raw(#""job":"#)
        writer.value(job)
        writer.raw("}")
    }
}

extension JobsInterface.JobsReply: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        // Most jobs write 500 to 700 bytes; reserving once saves the regrowth of a large page.
        writer.reserve(jobs.count * 640 + 16)
        writer.raw(#"{"jobs":"#)
        writer.array(jobs)
        writer.raw("}")
    }
}

extension JobsInterface.SubmitBatchReply: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.reserve(ids.count * 8 + (jobs?.count ?? 0) * 640 + 24)
        writer.raw(#"{"ids":"#)
        writer.array(ids)
        if let jobs {
            writer.raw(#","jobs":"#)
            writer.array(jobs)
        }
        writer.raw("}")
    }
}

extension JobsInterface.RetryFailedReply: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.reserve(jobs.count * 640 + 32)
        writer.raw(#"{"jobs":"#)
        writer.array(jobs)
        writer.raw(#","refused":["#)
        for (index, refusal) in refused.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw(#"{"id":"#)
            writer.integer(refusal.id.rawValue)
            writer.raw(#","message":"#)
            writer.string(refusal.message)
            writer.raw("}")
        }
        writer.raw("]}")
    }
}

extension JobsInterface.EventReply: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        guard let event else { return writer.raw("{}") }
        writer.raw(#"{"event":"#)
        writer.value(event)
        writer.raw("}")
    }
}
