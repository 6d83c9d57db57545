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

    init(path: String, chunkBytes: Int, mustExist: Bool = false) {
        self.path = path
        self.chunkBytes = chunkBytes
        self.mustExist = mustExist
    }

    /// Whether the file is open.
    var isOpen: Bool { fd >= 0 }

    /// Opens the file unless it is open already.
    /// - Returns: `false` when the file does not exist (yet).
    /// - Throws: ``LogReadError`` for any other failure of open(2), and
    ///   ``LogReadError/missing(_:)`` when the file does not exist but ``mustExist``.
    mutating func open() throws(LogReadError) -> Bool {
        if fd >= 0 { return true }
        let opened = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if opened < 0 {
            if errno == ENOENT {
                if mustExist { throw .missing(path) }
                return false
            }
            throw LogReadError("cannot open", path: path)
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

    /// Sends what the file holds from the offset to its current end, in chunks of at most
    /// ``chunkBytes``, each a reply with `continues`.
    /// - Parameters:
    ///   - responder: where the replies go.
    ///   - isFinal: the last chunk (possibly empty) ends the call; otherwise an empty rest
    ///     sends nothing, unless `repliesWhenEmpty`.
    ///   - repliesWhenEmpty: send one reply even when there is nothing new (with empty data).
    /// - Throws: ``LogReadError`` when the file cannot be read; nothing more was sent then.
    mutating func send(
        to responder: VarlinkResponder, isFinal: Bool, repliesWhenEmpty: Bool = false
    ) throws(LogReadError) {
        // A new attempt opens the file with O_TRUNC: a file shorter than what was sent is
        // that attempt's output, sent from its start.
        if fd >= 0, try currentSize() < offset { offset = 0 }
        var buffer = [UInt8](repeating: 0, count: chunkBytes)
        var isFirstReply = true
        while true {
            var count = 0
            while fd >= 0 {
                count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
                if count >= 0 { break }
                if errno != EINTR { throw LogReadError("cannot read", path: path) }
            }
            offset += Int64(count)
            let isLast = count < chunkBytes
            if isLast && !isFinal && count == 0 && !(repliesWhenEmpty && isFirstReply) { return }
            isFirstReply = false
            responder.reply(
                JobsInterface.LogsReply(data: Data(buffer[..<count]).base64EncodedString(), offset: offset),
                continues: !(isLast && isFinal))
            if isLast { return }
        }
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
