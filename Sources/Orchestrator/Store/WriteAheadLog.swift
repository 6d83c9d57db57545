import Foundation

/// What SQLite would replay from a `-wal` file, read with plain reads before SQLite opens the
/// database (SQLite's recovery would otherwise apply it, and the checkpoint at close would
/// write it into the database file).
///
/// Format from <https://www.sqlite.org/fileformat2.html#the_write_ahead_log>: a 32-byte
/// header (magic 0x377F0682/0x377F0683, version 3007000, page size, checkpoint sequence, two
/// salts, a checksum of the first 24 bytes), then frames of a 24-byte header (page number,
/// database size in pages on a commit frame, the two salts, a running checksum over the frame
/// header's first 8 bytes and the page) and a page. SQLite replays the frames up to the last
/// commit frame before the first frame whose salts or checksum do not match; a file with no
/// valid header, or no valid commit frame, is replayed as nothing. Nothing in the file names
/// its database: the page size, the database size and page 1 (which carries the
/// `application_id`) are all there is to compare.
struct WriteAheadLog {
    /// The page size in bytes, from the header.
    let pageSize: Int
    /// Committed frames SQLite would replay; 0: the file changes nothing.
    let committedFrames: Int
    /// The database size in pages after the last replayed commit; 0 when nothing is replayed.
    let databasePages: Int
    /// The first 100 bytes (the database header) of the last replayed image of page 1, if a
    /// replayed frame holds page 1.
    let pageOneHeader: [UInt8]?

    /// Reads the `-wal` file at `path` as SQLite's recovery would.
    /// - Returns: `nil` when the file has no valid header (SQLite replays nothing from it).
    /// - Throws: `CocoaError` when the file cannot be opened or read.
    static func read(path: String) throws -> WriteAheadLog? {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        guard let header = try handle.read(upToCount: 32), header.count == 32 else { return nil }
        let bytes = [UInt8](header)
        let magic = bigEndian(bytes, 0)
        guard magic & 0xFFFF_FFFE == 0x377F_0682, bigEndian(bytes, 4) == 3_007_000 else { return nil }
        let checksumBigEndian = magic & 1 == 1
        let pageSize = Int(bigEndian(bytes, 8))
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
        var sum = checksum(bytes[0..<24], bigEndianWords: checksumBigEndian, from: (0, 0))
        guard sum == (bigEndian(bytes, 24), bigEndian(bytes, 28)) else { return nil }
        let salts = (bigEndian(bytes, 16), bigEndian(bytes, 20))

        var frames = 0
        var committedFrames = 0
        var databasePages = 0
        var pageOne: [UInt8]?
        var committedPageOne: [UInt8]?
        while let data = try handle.read(upToCount: 24 + pageSize), data.count == 24 + pageSize {
            let frame = [UInt8](data)
            let page = bigEndian(frame, 0)
            guard page != 0, (bigEndian(frame, 8), bigEndian(frame, 12)) == salts else { break }
            sum = checksum(frame[0..<8], bigEndianWords: checksumBigEndian, from: sum)
            sum = checksum(frame[24...], bigEndianWords: checksumBigEndian, from: sum)
            guard sum == (bigEndian(frame, 16), bigEndian(frame, 20)) else { break }
            frames += 1
            if page == 1 { pageOne = Array(frame[24..<124]) }
            let commitSize = bigEndian(frame, 4)
            if commitSize != 0 {
                committedFrames = frames
                databasePages = Int(commitSize)
                committedPageOne = pageOne
            }
        }
        return WriteAheadLog(
            pageSize: pageSize, committedFrames: committedFrames, databasePages: databasePages,
            pageOneHeader: committedPageOne)
    }

    /// The big-endian 32-bit integer at `offset`.
    static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// SQLite's WAL checksum: over 32-bit words taken in pairs, `s0 += x0 + s1; s1 += x1 + s0`.
    private static func checksum(
        _ bytes: ArraySlice<UInt8>, bigEndianWords: Bool, from start: (UInt32, UInt32)
    ) -> (UInt32, UInt32) {
        var (s0, s1) = start
        var index = bytes.startIndex
        while index + 8 <= bytes.endIndex {
            let x0 = word(bytes, index, bigEndianWords)
            let x1 = word(bytes, index + 4, bigEndianWords)
            s0 = s0 &+ x0 &+ s1
            s1 = s1 &+ x1 &+ s0
            index += 8
        }
        return (s0, s1)
    }

    private static func word(_ bytes: ArraySlice<UInt8>, _ at: Int, _ bigEndianWord: Bool) -> UInt32 {
        let b0 = UInt32(bytes[at]), b1 = UInt32(bytes[at + 1]), b2 = UInt32(bytes[at + 2]), b3 = UInt32(bytes[at + 3])
        return bigEndianWord ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0
    }
}
