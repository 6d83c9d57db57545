import OrchestratorAPI
import Testing

@Suite("Varlink framing")
struct VarlinkFrameDecoderTests {
    @Test("messages split on NUL bytes, across reads")
    func splitsOnNul() throws {
        var decoder = VarlinkFrameDecoder()
        #expect(try decoder.append(Array("{\"a\":1}\u{0}{\"b\"".utf8)) == [Array("{\"a\":1}".utf8)])
        #expect(decoder.hasPartialMessage)
        #expect(try decoder.append(Array(":2}\u{0}".utf8)) == [Array("{\"b\":2}".utf8)])
        #expect(!decoder.hasPartialMessage)
    }

    @Test("a message over the cap is refused")
    func capEnforced() {
        var decoder = VarlinkFrameDecoder(maximumMessageBytes: 8)
        #expect(throws: VarlinkFrameDecoder.FrameError.messageTooLarge(limitBytes: 8)) {
            _ = try decoder.append(Array("123456789".utf8))
        }
    }
}
