import CSystemd
import Foundation
import Glibc
import OrchestratorAPI
import Synchronization

/// Logs every event: to the journal with structured fields (`ORCHD_JOB_ID`, `ORCHD_QUEUE`,
/// `ORCHD_OWNER_UID` (the job's owner), `ORCHD_EVENT`, `PRIORITY`, `MESSAGE`; sd_journal_sendv(3)) when journald is reachable, else
/// one line on stderr. `journalctl ORCHD_JOB_ID=7` then shows one job's story.
///
/// The stderr lines of one delivery go out in one write(2) at its end (``eventsDelivered()``):
/// a batch of 1,000 submits made 1,000 system calls before.
final class JournalObserver: JobObserver {
    /// Whether journald's socket exists (systemd-journald.service(8)).
    private let useJournal: Bool
    /// The stderr lines of the delivery in progress.
    private let pendingLines = Mutex<[UInt8]>([])

    /// - Parameter useJournal: send to the journal; default: when its socket exists.
    init(useJournal: Bool = access("/run/systemd/journal/socket", W_OK) == 0) {
        self.useJournal = useJournal
    }

    func eventRecorded(_ event: Event) {
        let level = EventDescription.level(event)
        // `--log-level` holds for journal entries as for lines: `warning` keeps failures only.
        guard DaemonLog.logs(level) else { return }
        let message = EventDescription.message(event)
        guard useJournal else {
            // The daemon's own log says these already, with more ("orchd 0.1.0 ready: socket
            // ..."); in the journal they stay, as entries with ORCHD_EVENT to search by.
            if event.kind == .daemonReady || event.kind == .daemonStopping { return }
            if let line = DaemonLog.line(level, { message }) {
                pendingLines.withLock { $0.append(contentsOf: line.utf8) }
            }
            return
        }
        let fields = Self.fields(of: event, message: message, priority: level.rawValue)
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

    func eventsDelivered() {
        // Only the control queue calls in, so writing under the lock holds up no one.
        pendingLines.withLock { lines in
            guard !lines.isEmpty else { return }
            DaemonLog.write(lines: lines)
            lines.removeAll(keepingCapacity: true)
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
