import Foundation
import Glibc
import OrchestratorAPI

/// A job's log file, opened for reading, and the offset up to which it has been sent. Owned
/// by one queue at a time (not shared), and closed with ``close()``.
struct LogCursor {
    /// The log file.
    let path: String
    /// Raw bytes per reply.
    let chunkBytes: Int
    /// The open file, or -1 while it does not exist (the job has not started).
    private(set) var fd: Int32 = -1
    /// The offset just past the bytes sent so far.
    private(set) var offset: Int64 = 0
    /// Whether the job's process was started, so that the file was created and a missing
    /// file means lost output rather than "not started yet".
    let mustExist: Bool
    /// The attempt whose output the file is, sent with each reply; `nil` leaves it out.
    let attempt: Int?
    /// The uid of the job's owner, who may put anything in their log directory.
    let owner: UInt32

    init(path: String, chunkBytes: Int, owner: UInt32, mustExist: Bool = false, attempt: Int? = nil) {
        self.path = path
        self.chunkBytes = chunkBytes
        self.owner = owner
        self.mustExist = mustExist
        self.attempt = attempt
    }

    /// Whether the file is open.
    var isOpen: Bool { fd >= 0 }

    /// Opens the file unless it is open already.
    ///
    /// The daemon reads as root from a directory the job's owner can write to, so what it
    /// opens must be the log file itself: a symbolic link is not followed, a FIFO cannot block
    /// the open, and only a regular file is read that is the owner's or has no other name (a
    /// hard link to someone else's file has two). Otherwise `logs` would print any file the
    /// owner links there, `/etc/shadow` included.
    /// - Returns: `false` when the file does not exist (yet).
    /// - Throws: ``LogReadError`` for any other failure of open(2),
    ///   ``LogReadError/missing(_:)`` when the file does not exist but ``mustExist``, and
    ///   ``LogReadError/notALogFile(_:)`` for a link or anything but such a regular file.
    mutating func open() throws(LogReadError) -> Bool {
        if fd >= 0 { return true }
        let opened = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK)
        if opened < 0 {
            if errno == ENOENT {
                if mustExist { throw .missing(path) }
                return false
            }
            if errno == ELOOP { throw .notALogFile(path) }
            throw LogReadError("cannot open", path: path)
        }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            let error = LogReadError("cannot stat", path: path)
            Glibc.close(opened)
            throw error
        }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == owner || info.st_nlink == 1 else {
            Glibc.close(opened)
            throw .notALogFile(path)
        }
        fd = opened
        return true
    }

    /// Moves to `start`; an offset past the end of the file is the end. A file that does not
    /// exist yet is empty, so the cursor stays at 0.
    /// - Throws: ``LogReadError`` when the file cannot be read.
    mutating func seek(to start: LogStart) throws(LogReadError) {
        guard fd >= 0 else { return }
        let size = try currentSize()
        switch start {
        case .offset(let requested):
            offset = min(requested, size)
        case .lastLines(let lines):
            offset = try LogTail.startOffset(ofLast: lines, in: fd, size: size, path: path)
        }
    }

    /// Sends the next chunk of the file from the offset, at most ``chunkBytes``, as one reply.
    /// A stream sends chunk after chunk, each when its client has room (``ReplyPacer``), so a
    /// log of any size is read in constant memory.
    /// - Parameters:
    ///   - responder: where the reply goes.
    ///   - endsCall: a chunk that reaches the end of the file ends the call (a final reply,
    ///     possibly empty). Otherwise every reply continues, and an empty chunk is not sent.
    ///   - evenIfEmpty: send an empty chunk too (when not `endsCall`).
    /// - Returns: `true` when the chunk reached the current end of the file, `false` when more
    ///   is there now.
    /// - Throws: ``LogReadError`` when the file cannot be read; nothing was sent then.
    mutating func sendChunk(
        to responder: VarlinkResponder, endsCall: Bool, evenIfEmpty: Bool = false
    ) throws(LogReadError) -> Bool {
        // A new attempt opens the file with O_TRUNC: a file shorter than what was sent is
        // that attempt's output, sent from its start.
        if fd >= 0, try currentSize() < offset { offset = 0 }
        var buffer = [UInt8](repeating: 0, count: chunkBytes)
        var count = 0
        while fd >= 0 {
            count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if count >= 0 { break }
            if errno != EINTR { throw LogReadError("cannot read", path: path) }
        }
        offset += Int64(count)
        let reachedEnd = count < chunkBytes
        if reachedEnd && !endsCall && count == 0 && !evenIfEmpty { return true }
        responder.reply(
            JobsInterface.LogsReply(data: Data(buffer[..<count]).base64EncodedString(), offset: offset, attempt: attempt),
            continues: !(reachedEnd && endsCall))
        return reachedEnd
    }

    /// Closes the file.
    mutating func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private func currentSize() throws(LogReadError) -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw LogReadError("cannot stat", path: path) }
        return Int64(info.st_size)
    }
}
