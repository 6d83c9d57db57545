import FoundationEssentials

/// Events are read from `Subscribe` replies and written as `orchctl events` lines without the
/// Codable coders, for the same reason as jobs (``Job/read(_:)``): their first use in a process
/// was most of a short `events` command's work.
extension Event: JSONByteEncodable {
    /// Writes what ``encode(to:)`` does, keys in `.sortedKeys` order, every key present and
    /// `null` when its value is absent.
    public func writeJSON(to writer: inout JSONByteWriter) {
        writer.raw(#"{"at":"#)
        writer.timestamp(at)
        writer.raw(#","attempt":"#)
        writer.integer(attempt.map(Int64.init))
        writer.raw(#","exitCode":"#)
        writer.integer(exitCode)
        writer.raw(#","jobId":"#)
        writer.integer(jobId?.rawValue)
        writer.raw(#","kind":"#)
        writer.string(kind.rawValue)
        writer.raw(#","ownerUid":"#)
        writer.integer(ownerUid.map(Int64.init))
        writer.raw(#","previousState":"#)
        writer.string(previousState)
        writer.raw(#","queue":"#)
        writer.string(queue?.rawValue)
        writer.raw(#","result":"#)
        writer.string(result)
        writer.raw(#","seq":"#)
        writer.integer(seq)
        writer.raw(#","signal":"#)
        writer.integer(signal)
        writer.raw(#","state":"#)
        writer.string(state)
        writer.raw("}")
    }

    /// Reads an event as ``init(from:)`` decodes it, or gives up (`nil`): a key given twice, an
    /// integer out of its field's range, a queue name that is not one, a time that is not one.
    @Sendable public static func read(_ reader: inout JSONByteReader) -> Event? {
        var seq: Int64?, at: Date?, kind: String?, jobId: Int64?, queue: String?, state: String?, previousState: String?
        var result: String?, exitCode: Int64?, signal: Int64?, attempt: Int64?, ownerUid: Int64?
        let ok = reader.object { key, reader in
            switch key {
            case "seq": return reader.required(&seq) { $0.integer() }
            case "at": return reader.required(&at) { $0.string().flatMap(Timestamp.parse) }
            case "kind": return reader.required(&kind) { $0.string() }
            case "jobId": return reader.nullable(&jobId) { $0.integer() }
            case "queue": return reader.nullable(&queue) { $0.string() }
            case "state": return reader.nullable(&state) { $0.string() }
            case "previousState": return reader.nullable(&previousState) { $0.string() }
            case "result": return reader.nullable(&result) { $0.string() }
            case "exitCode": return reader.nullable(&exitCode) { $0.integer() }
            case "signal": return reader.nullable(&signal) { $0.integer() }
            case "attempt": return reader.nullable(&attempt) { $0.integer() }
            case "ownerUid": return reader.nullable(&ownerUid) { $0.integer() }
            default: return reader.skipValue()
            }
        }
        guard ok, let seq, let at, let kind,
              exitCode.map({ Int32(exactly: $0) != nil }) ?? true, signal.map({ Int32(exactly: $0) != nil }) ?? true,
              ownerUid.map({ UInt32(exactly: $0) != nil }) ?? true
        else { return nil }
        var queueName: QueueName?
        if let queue {
            guard let name = QueueName(rawValue: queue) else { return nil }
            queueName = name
        }
        return Event(
            seq: seq, at: at, kind: EventKind(rawValue: kind), jobId: jobId.map(JobID.init(rawValue:)), queue: queueName,
            state: state, previousState: previousState, result: result, exitCode: exitCode.map { Int32($0) },
            signal: signal.map { Int32($0) }, attempt: attempt.map { Int($0) }, ownerUid: ownerUid.map { UInt32($0) })
    }
}
