import Foundation
import OrchestratorAPI
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

@Suite("Log time stamps")
struct DaemonLogStampTests {
    @Test("a stamp is Timestamp.format's text, also for times that share a millisecond or follow one another")
    func sameAsFormat() {
        let base = Date(timeIntervalSince1970: 1_796_160_000.1234)
        let times = [0, 0.0001, 0.0004, 0.0009, 0.001, 0.0015, -0.5, 3600, 0.000999, -1_796_160_000.1234 - 0.0005]
            .map { base.addingTimeInterval($0) }
        for time in times + times.reversed() {
            #expect(DaemonLog.stamp(time) == Timestamp.format(time), "\(time.timeIntervalSince1970)")
        }
    }
}
