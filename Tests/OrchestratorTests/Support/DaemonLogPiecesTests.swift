import Testing

@testable import Orchestrator

@Suite("Log lines written in pieces a pipe takes whole")
struct DaemonLogPiecesTests {
    /// The pieces of `text` as strings.
    private func pieces(_ text: String, limit: Int) -> [String] {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            DaemonLog.pieces(of: buffer, limit: limit).map { String(decoding: buffer[$0], as: UTF8.self) }
        }
    }

    @Test("pieces end at newlines, stay within the limit, and together are the text")
    func wholeLines() {
        let lines = (1...50).map { "line \($0) " + String(repeating: "x", count: $0 % 7) + "\n" }
        let text = lines.joined()
        for limit in [1, 8, 20, 64, 4096] {
            let cut = pieces(text, limit: limit)
            #expect(cut.joined() == text)
            for piece in cut {
                #expect(piece.hasSuffix("\n"))
                // Longer than the limit only when it is one line.
                #expect(piece.utf8.count <= limit || piece.dropLast().contains("\n") == false, "\(limit): \(piece)")
            }
        }
        #expect(pieces(text, limit: 4096) == [text])
    }

    @Test("a line longer than the limit is a piece of its own; text after the last newline is the last piece")
    func longLineAndTail() {
        let long = String(repeating: "y", count: 100) + "\n"
        #expect(pieces("a\n" + long + "b\n", limit: 10) == ["a\n", long, "b\n"])
        #expect(pieces("a\nb\ntail", limit: 4) == ["a\nb\n", "tail"])
        #expect(pieces("", limit: 4) == [])
    }
}
