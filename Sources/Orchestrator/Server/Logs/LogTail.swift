import Glibc

/// Finds where the last lines of a log file begin, reading the file backwards in chunks so a
/// large log is never read into memory whole (as `tail -n` does).
///
/// A line ends with a newline; a final line without one counts as a line too. So the last two
/// lines of `a\nb\nc\n` and of `a\nb\nc` both begin at offset 2.
enum LogTail {
    /// Bytes read per step backwards: 64 KiB.
    static let defaultChunkBytes = 64 * 1024

    /// The offset where the last `lines` lines of the file open as `fd` begin.
    ///
    /// ```swift
    /// let start = try LogTail.startOffset(ofLast: 20, in: fd, size: size, path: path)
    /// ```
    /// - Parameters:
    ///   - lines: how many lines, 0 or more; 0 gives `size`, more than the file has gives 0.
    ///   - fd: the file, open for reading; read with pread(2), so its offset is unchanged.
    ///   - size: the file's size in bytes (the end to count back from).
    ///   - path: the file's path, for error messages.
    ///   - chunkBytes: bytes read per step (at least 1); injectable so tests cross boundaries.
    /// - Returns: the offset in bytes from the start of the file.
    /// - Throws: ``LogReadError`` when pread(2) fails.
    static func startOffset(
        ofLast lines: Int, in fd: Int32, size: Int64, path: String, chunkBytes: Int = defaultChunkBytes
    ) throws(LogReadError) -> Int64 {
        precondition(lines >= 0 && chunkBytes > 0)
        guard lines > 0, size > 0 else { return size }
        var buffer = [UInt8](repeating: 0, count: chunkBytes)
        // The newline that ends the file ends the last line; it does not start one.
        var end = size
        var newlinesToSkip = 1
        var newlinesSeen = 0
        var isFirstChunk = true
        while end > 0 {
            let start = max(0, end - Int64(chunkBytes))
            let wanted = Int(end - start)
            let count = try readFully(fd, into: &buffer, count: wanted, at: start, path: path)
            guard count == wanted else {
                // The file shrank under us (a new attempt truncated it): start from its beginning.
                return 0
            }
            var index = count - 1
            if isFirstChunk {
                isFirstChunk = false
                if buffer[index] != UInt8(ascii: "\n") { newlinesToSkip = 0 }
            }
            while index >= 0 {
                if buffer[index] == UInt8(ascii: "\n") {
                    if newlinesToSkip > 0 {
                        newlinesToSkip -= 1
                    } else {
                        newlinesSeen += 1
                        if newlinesSeen == lines { return start + Int64(index) + 1 }
                    }
                }
                index -= 1
            }
            end = start
        }
        return 0
    }

    /// pread(2) until `count` bytes or the end of the file; retries `EINTR`.
    private static func readFully(
        _ fd: Int32, into buffer: inout [UInt8], count: Int, at offset: Int64, path: String
    ) throws(LogReadError) -> Int {
        var done = 0
        while done < count {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LogReadError("cannot read", path: path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}
