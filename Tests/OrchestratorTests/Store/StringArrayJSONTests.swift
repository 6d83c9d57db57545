import Foundation
import Testing

@testable import Orchestrator

@Suite("StringArrayJSON: an argv's JSON without the coders")
struct StringArrayJSONTests {
    static let vectors: [[String]] = [
        [], ["true"], ["sh", "-c", "echo hi > /tmp/x"], ["a b", "", "/usr/bin/env", "x=1,y=2"], ["[", "]", ",", "{}"],
        ["quote\"d"], ["back\\slash"], ["tab\there"], ["new\nline"], ["é"], ["\u{7F}"], ["emoji 🙂"], ["nul\u{0}"],
    ]

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    @Test("what it writes is byte for byte what JSONEncoder writes, and it declines what needs escaping", arguments: vectors)
    func encodesAsTheEncoder(words: [String]) throws {
        let coder = String(decoding: try Self.encoder().encode(words), as: UTF8.self)
        if let fast = StringArrayJSON.encode(words) {
            #expect(fast == coder)
        } else {
            #expect(words.contains { $0.utf8.contains { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } })
        }
    }

    @Test("what it reads is what JSONDecoder reads, and it declines what it does not know", arguments: vectors)
    func decodesAsTheDecoder(words: [String]) throws {
        let text = String(decoding: try Self.encoder().encode(words), as: UTF8.self)
        if let fast = StringArrayJSON.decode(text) {
            #expect(fast == words)
        }
        #expect(try JSONDecoder().decode([String].self, from: Data(text.utf8)) == words)
    }

    @Test("text the coder would read differently or refuse is declined", arguments: [
        "[\"a\" ,\"b\"]", "[ \"a\"]", "[\"a\\u0041\"]", "[1]", "[\"a\",]", "[\"a\"", "\"a\"", "[\"a\"\"b\"]", "[,]", "",
        "[\"é\"]",
    ])
    func declines(text: String) {
        #expect(StringArrayJSON.decode(text) == nil)
    }
}
