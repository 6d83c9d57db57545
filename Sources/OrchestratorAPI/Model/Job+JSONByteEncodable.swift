/// Job replies are most of what the daemon sends (`Submit`, `Wait`, `List` pages), and
/// `JSONEncoder` made encoding them a visible share of its CPU.
///
/// Writes what ``Job/encode(to:)`` does, with the keys in the order `JSONEncoder`'s
/// `.sortedKeys` gives them, so the daemon's bytes are unchanged: every key but `slurmJobId`
/// is present, `null` when its value is absent.
extension Job: JSONByteEncodable {
    public func writeJSON(to writer: inout JSONByteWriter) {
        let result = state.result
        writer.raw(#"{"after":"#)
        writer.array(spec.after)
        writer.raw(#","argv":"#)
        let shell: String?
        switch spec.command {
        case .argv(let argv):
            writer.array(argv)
            shell = nil
        case .shell(let line):
            writer.null()
            shell = line
        }
        writer.raw(#","attempt":"#)
        writer.integer(attempt)
        writer.raw(#","cwd":"#)
        writer.string(spec.cwd)
        writer.raw(#","exitCode":"#)
        writer.integer(result?.exitCode)
        writer.raw(#","failedDependency":"#)
        writer.integer(result?.failedDependency?.rawValue)
        writer.raw(#","finishedAt":"#)
        writer.timestamp(finishedAt)
        writer.raw(#","held":"#)
        writer.bool(held)
        writer.raw(#","id":"#)
        writer.integer(id.rawValue)
        writer.raw(#","labels":"#)
        writer.object(spec.labels)
        writer.raw(#","maxAttempts":"#)
        writer.integer(spec.maxAttempts)
        writer.raw(#","name":"#)
        writer.string(spec.name)
        writer.raw(#","notBefore":"#)
        writer.timestamp(spec.notBefore)
        writer.raw(#","pid":"#)
        writer.integer(pid)
        writer.raw(#","priority":"#)
        writer.integer(spec.priority)
        writer.raw(#","queue":"#)
        writer.string(spec.queue.rawValue)
        writer.raw(#","reason":"#)
        writer.string(result?.reason)
        writer.raw(#","result":"#)
        writer.string(result?.name)
        writer.raw(#","shell":"#)
        writer.string(shell)
        writer.raw(#","signal":"#)
        writer.integer(result?.signal)
        if let slurmJobId {
            writer.raw(#","slurmJobId":"#)
            writer.string(slurmJobId)
        }
        writer.raw(#","startedAt":"#)
        writer.timestamp(startedAt)
        writer.raw(#","state":"#)
        writer.string(state.name)
        writer.raw(#","submittedAt":"#)
        writer.timestamp(submittedAt)
        writer.raw(#","submitterUid":"#)
        writer.integer(submitterUid)
        writer.raw(#","suspended":"#)
        writer.bool(suspended)
        writer.raw(#","timeoutUSec":"#)
        writer.integer(spec.timeoutUSec)
        writer.raw(#","uniqueKey":"#)
        writer.string(spec.uniqueKey)
        writer.raw("}")
    }
}
