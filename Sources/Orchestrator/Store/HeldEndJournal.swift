import Foundation
import Glibc
import OrchestratorAPI

/// The ends of jobs that the database refused (a full file system, a write lock another
/// process holds), kept in a small file beside it until the database takes them: a crash of
/// orchd meanwhile (`kill -9`) then still records the result the job had, instead of
/// `interrupted` and a retry that would run it a second time.
///
/// The file, `held-ends` in the state directory, has ``slotCount`` slots of ``slotBytes``
/// bytes and is allocated in full when it is opened (`posix_fallocate(3)`), so that writing a
/// slot needs no new block on a file system that has since filled up. An end takes one slot,
/// written with one `pwrite(2)` and made durable with `fdatasync(2)` before orchd goes on;
/// a slot is a line of text (`v1 ID ATTEMPT ENDED_USEC ENDING CHECKSUM`, zero-padded), so a
/// slot cut short by a crash fails its checksum and is ignored.
final class HeldEndJournal {
    /// One kept end.
    struct Entry: Hashable, Sendable {
        /// The job.
        var id: JobID
        /// The attempt that ended (from 1): recovery takes the end only for the attempt the
        /// database still records as running.
        var attempt: Int
        /// The result, as ``JobStore/Ending`` holds it.
        var ending: JobStore.Ending
        /// When the attempt ended.
        var endedAt: Date
    }

    /// How many ends the file holds at once; more are kept in memory only, as before.
    static let slotCount = 1024
    /// The bytes of one slot.
    static let slotBytes = 128
    /// The file's name in the state directory.
    static let fileName = "held-ends"

    private let fd: Int32
    /// The path of the file.
    let path: String
    /// The slot each held job's end is in.
    private var slots: [JobID: Int] = [:]

    /// Why the file could not be opened: `open PATH: <strerror>`.
    struct OpenFailure: Error, CustomStringConvertible {
        var path: String
        var errno: Int32
        var description: String { "open \(path): \(String(cString: strerror(errno)))" }
    }

    /// Opens (creating it) and allocates the journal in `stateDirectory`.
    /// - Throws: ``OpenFailure`` when the file cannot be opened or created (a symbolic link
    ///   or a directory in its place, say). An allocation that
    ///   fails (a file system full at start-up) is no error, only a weaker promise, and is
    ///   logged.
    init(stateDirectory: String) throws {
        path = stateDirectory + "/" + Self.fileName
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw OpenFailure(path: path, errno: errno) }
        let code = posix_fallocate(fd, 0, off_t(Self.slotCount * Self.slotBytes))
        if code != 0 {
            DaemonLog.warning("cannot allocate \(path) (\(String(cString: strerror(code)))): a job end the database refuses may then be kept in memory only")
        }
    }

    deinit {
        close(fd)
    }

    /// Whether any slot is taken.
    var isHolding: Bool { !slots.isEmpty }

    /// The ends the file holds, by job; slots that fail their checksum (cut short by a
    /// crash) or that this orchd cannot read are left out.
    func entries() -> [JobID: Entry] {
        var bytes = [UInt8](repeating: 0, count: Self.slotCount * Self.slotBytes)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return [:] }
        var found: [JobID: Entry] = [:]
        for slot in 0..<(count / Self.slotBytes) {
            let start = slot * Self.slotBytes
            let line = bytes[start..<(start + Self.slotBytes)].prefix { $0 != 0 && $0 != UInt8(ascii: "\n") }
            if let entry = Self.parse(String(decoding: line, as: UTF8.self)) {
                found[entry.id] = entry
                slots[entry.id] = slot
            }
        }
        return found
    }

    /// Writes `entry` to a free slot and makes it durable.
    /// - Returns: whether it is on disk; `false` when every slot is taken or the write or
    ///   the sync failed (the end is then kept in memory only).
    @discardableResult
    func hold(_ entry: Entry) -> Bool {
        guard let text = JobStore.endingText(entry.ending.result) else { return false }
        let used = Set(slots.values)
        guard let slot = slots[entry.id] ?? (0..<Self.slotCount).first(where: { !used.contains($0) }) else { return false }
        let body = "v1 \(entry.id.rawValue) \(entry.attempt) \(Timestamp.microseconds(entry.endedAt)) \(text)\(entry.ending.isFinal ? JobStore.finalMark : "")"
        var bytes = Array("\(body) \(Self.checksum(body))\n".utf8)
        guard bytes.count <= Self.slotBytes else { return false }
        bytes += [UInt8](repeating: 0, count: Self.slotBytes - bytes.count)
        guard write(bytes, slot: slot), fdatasync(fd) == 0 else { return false }
        slots[entry.id] = slot
        return true
    }

    /// Frees the slot of job `id`, once the database has its end. Not synced: a slot a crash
    /// leaves behind is for an attempt the database no longer records as running, which
    /// recovery ignores.
    func release(_ id: JobID) {
        guard let slot = slots.removeValue(forKey: id) else { return }
        _ = write([UInt8](repeating: 0, count: Self.slotBytes), slot: slot)
    }

    /// Frees every slot, after recovery recorded what they held.
    func releaseAll() {
        for id in Array(slots.keys) { release(id) }
        _ = fdatasync(fd)
    }

    private func write(_ bytes: [UInt8], slot: Int) -> Bool {
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(slot * Self.slotBytes)) }
        return written == bytes.count
    }

    /// The entry of a slot's line, or `nil` when it is empty, cut short or of another version.
    static func parse(_ line: String) -> Entry? {
        guard let cut = line.lastIndex(of: " ") else { return nil }
        let body = String(line[..<cut])
        guard line[line.index(after: cut)...] == checksum(body)[...] else { return nil }
        let fields = body.split(separator: " ").map(String.init)
        guard fields.count == 5, fields[0] == "v1", let id = Int64(fields[1]), let attempt = Int(fields[2]),
              let microseconds = Int64(fields[3]) else { return nil }
        var text = fields[4]
        let isFinal = text.hasSuffix(JobStore.finalMark)
        if isFinal { text.removeLast(JobStore.finalMark.count) }
        guard let result = JobStore.ending(from: text) else { return nil }
        return Entry(
            id: JobID(rawValue: id), attempt: attempt, ending: JobStore.Ending(result: result, isFinal: isFinal),
            endedAt: Timestamp.date(microseconds: microseconds))
    }

    /// The content hash of `text` (FNV-1a 64, as for environments), in hexadecimal: tells a
    /// whole slot from one a crash cut short.
    private static func checksum(_ text: String) -> String {
        String(UInt64(bitPattern: JobStore.contentHash(text)), radix: 16)
    }
}
