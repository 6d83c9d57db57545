import CSystemd
import Foundation
import Glibc
import OrchestratorAPI

/// Logs every event: to the journal with structured fields (`ORCHD_JOB_ID`, `ORCHD_QUEUE`,
/// `ORCHD_OWNER_UID` (the job's owner), `ORCHD_EVENT`, `PRIORITY`, `MESSAGE`; sd_journal_sendv(3)) when journald is reachable, else
/// one line on stderr. `journalctl ORCHD_JOB_ID=7` then shows one job's story.
final class JournalObserver: JobObserver {
    /// Whether journald's socket exists (systemd-journald.service(8)).
    private let useJournal: Bool

    /// - Parameter useJournal: send to the journal; default: when its socket exists.
    init(useJournal: Bool = access("/run/systemd/journal/socket", W_OK) == 0) {
        self.useJournal = useJournal
    }

    func eventRecorded(_ event: Event) {
        let message = EventDescription.message(event)
        let priority = EventDescription.priority(event)
        guard useJournal else {
            if priority <= 4 { DaemonLog.warning(message) } else { DaemonLog.info(message) }
            return
        }
        let fields = Self.fields(of: event, message: message, priority: priority)
        // sd_journal_sendv takes the fields as iovecs; each must stay alive for the call.
        let buffers = fields.map { Array($0.utf8) }
        var iovecs: [iovec] = []
        iovecs.reserveCapacity(buffers.count)
        buffers.withUnsafeBufferPointers { pointers in
            for pointer in pointers {
                iovecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: pointer.baseAddress), iov_len: pointer.count))
            }
            _ = sd_journal_sendv(&iovecs, Int32(iovecs.count))
        }
    }

    /// The journal fields of one event (systemd.journal-fields(7) for the standard ones).
    static func fields(of event: Event, message: String, priority: Int) -> [String] {
        var fields = [
            "MESSAGE=\(message)", "PRIORITY=\(priority)", "SYSLOG_IDENTIFIER=orchd", "ORCHD_EVENT=\(event.kind)",
            "ORCHD_EVENT_SEQ=\(event.seq)",
        ]
        if let id = event.jobId { fields.append("ORCHD_JOB_ID=\(id)") }
        if let queue = event.queue { fields.append("ORCHD_QUEUE=\(queue)") }
        if let owner = event.ownerUid { fields.append("ORCHD_OWNER_UID=\(owner)") }
        if let result = event.result { fields.append("ORCHD_RESULT=\(result)") }
        return fields
    }
}

extension Array where Element == [UInt8] {
    /// Calls `body` with a buffer pointer to each element's bytes, all valid for the call.
    fileprivate func withUnsafeBufferPointers<R>(_ body: ([UnsafeBufferPointer<UInt8>]) -> R) -> R {
        func nest(_ index: Int, _ collected: [UnsafeBufferPointer<UInt8>]) -> R {
            guard index < count else { return body(collected) }
            return self[index].withUnsafeBufferPointer { nest(index + 1, collected + [$0]) }
        }
        return nest(0, [])
    }

}
