/// `Get` replies carry a job's attempts beside it, so they take the same path as the job.
///
/// Writes what ``JobAttempt/encode(to:)`` does, keys in `.sortedKeys` order: `failedDependency`
/// and `slurmJobId` only when present, every other key always, `null` when absent.
extension JobAttempt: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw(#"{"attempt":"#)
        writer.integer(attempt)
        writer.raw(#","exitCode":"#)
        writer.integer(result.exitCode)
        if let failedDependency = result.failedDependency {
            writer.raw(#","failedDependency":"#)
            writer.integer(failedDependency.rawValue)
        }
        writer.raw(#","finishedAt":"#)
        writer.timestamp(finishedAt)
        writer.raw(#","reason":"#)
        writer.string(result.reason)
        writer.raw(#","result":"#)
        writer.string(result.name)
        writer.raw(#","signal":"#)
        writer.integer(result.signal)
        if let slurmJobId {
            writer.raw(#","slurmJobId":"#)
            writer.string(slurmJobId)
        }
        writer.raw(#","startedAt":"#)
        writer.timestamp(startedAt)
        writer.raw("}")
    }
}
