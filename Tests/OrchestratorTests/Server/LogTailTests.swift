import Foundation
import Glibc
import Testing

@testable import Orchestrator

@Suite("Tail offset of a log file")
struct LogTailTests {
    /// The offset where the last `lines` lines of `content` begin, read in `chunkBytes` steps.
    private func offset(ofLast lines: Int, in content: String, chunkBytes: Int = LogTail.defaultChunkBytes) throws -> Int64 {
        let directory = try TemporaryDirectory()
        let path = directory.file("7.out")
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        return try LogTail.startOffset(ofLast: lines, in: fd, size: Int64(content.utf8.count), path: path, chunkBytes: chunkBytes)
    }

    /// What `tail -n lines` would print of `content`.
    private func tail(_ lines: Int, of content: String, chunkBytes: Int = LogTail.defaultChunkBytes) throws -> String {
        let start = try offset(ofLast: lines, in: content, chunkBytes: chunkBytes)
        return String(decoding: content.utf8.dropFirst(Int(start)), as: UTF8.self)
    }

    @Test("an empty file has no lines: every count starts at 0")
    func emptyFile() throws {
        #expect(try offset(ofLast: 0, in: "") == 0)
        #expect(try offset(ofLast: 3, in: "") == 0)
    }

    @Test("the last N lines of a file ending in a newline")
    func trailingNewline() throws {
        #expect(try tail(1, of: "a\nb\nc\n") == "c\n")
        #expect(try tail(2, of: "a\nb\nc\n") == "b\nc\n")
        #expect(try tail(3, of: "a\nb\nc\n") == "a\nb\nc\n")
    }

    @Test("a final line without a newline counts as a line")
    func noTrailingNewline() throws {
        #expect(try tail(1, of: "a\nb\nc") == "c")
        #expect(try tail(2, of: "a\nb\nc") == "b\nc")
        #expect(try tail(1, of: "only") == "only")
    }

    @Test("0 lines start at the end")
    func zeroLines() throws {
        #expect(try offset(ofLast: 0, in: "a\nb\n") == 4)
        #expect(try offset(ofLast: 0, in: "a\nb") == 3)
    }

    @Test("more lines than the file has start at 0")
    func moreThanTheFileHas() throws {
        #expect(try offset(ofLast: 10, in: "a\nb\nc\n") == 0)
        #expect(try offset(ofLast: 4, in: "a\nb\nc") == 0)
        #expect(try offset(ofLast: Int.max, in: "a\n") == 0)
    }

    @Test("empty lines are lines")
    func emptyLines() throws {
        #expect(try tail(1, of: "\n") == "\n")
        #expect(try tail(1, of: "\n\n") == "\n")
        #expect(try tail(2, of: "a\n\n\n") == "\n\n")
    }

    @Test("every chunk size gives the same answer, including boundaries on and next to newlines",
          arguments: [1, 2, 3, 4, 5, 7, 64])
    func chunkBoundaries(chunkBytes: Int) throws {
        let content = "first\nsecond\n\nfourth line\nfifth"
        for lines in 0...7 {
            #expect(try tail(lines, of: content, chunkBytes: chunkBytes) == tail(lines, of: content), "\(lines) lines")
        }
        let lines = (1...5).map { "line \($0)\n" }.joined()
        #expect(try tail(2, of: lines, chunkBytes: chunkBytes) == "line 4\nline 5\n")
    }

    @Test("a long log is found from its end, across many chunks")
    func longLog() throws {
        let content = (1...5000).map { "line \($0)\n" }.joined()
        #expect(try tail(3, of: content, chunkBytes: 100) == "line 4998\nline 4999\nline 5000\n")
    }
}
