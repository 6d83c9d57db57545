import Foundation
import Testing

@testable import Orchestrator

@Suite("JobColumnJSON: a job row's JSON columns without the coders")
struct JobColumnJSONTests {
    static let vectors: [[String]] = [
        [], ["true"], ["sh", "-c", "echo hi > /tmp/x"], ["a b", "", "/usr/bin/env", "x=1,y=2"], ["[", "]", ",", "{}"],
        ["quote\"d"], ["back\\slash"], ["tab\there"], ["new\nline"], ["é"], ["\u{7F}"], ["emoji 🙂"], ["nul\u{0}"],
    ]

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    @Test("what it writes decodes to the words, and is byte for byte JSONEncoder's text where nothing needs escaping", arguments: vectors)
    func encodesAsTheEncoder(words: [String]) throws {
        let coder = String(decoding: try Self.encoder().encode(words), as: UTF8.self)
        let fast = JobColumnJSON.encode(words)
        #expect(try JSONDecoder().decode([String].self, from: Data(fast.utf8)) == words)
        if !words.contains(where: { $0.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } }) {
            #expect(fast == coder)
        }
    }

    @Test("an environment or labels map is written with its keys sorted: the same text for the same map, which decodes to it", arguments: [
        [:], ["PATH": "/usr/bin:/bin"], ["B": "2", "A": "1", "AA": "", "a": "x"], ["K\"\\\n": "v\u{0}\u{1F}🙂", "é": "漢字"],
    ] as [[String: String]])
    func encodesMaps(map: [String: String]) throws {
        let text = JobColumnJSON.encode(map)
        #expect(try JSONDecoder().decode([String: String].self, from: Data(text.utf8)) == map)
        var copy: [String: String] = [:]
        for (key, value) in map.reversed() { copy[key] = value }
        #expect(JobColumnJSON.encode(copy) == text)
        if map.allSatisfy({ $0.key.utf8.allSatisfy { $0 < 0x7F } && !$0.value.contains("\u{0}") && !$0.key.contains("\\") }) {
            // Environments written before are found again: the same text as the sorted encoder's.
            #expect(text == String(decoding: try Self.encoder().encode(map), as: UTF8.self))
        }
    }

    @Test("what it reads is what JSONDecoder reads, and it declines what it does not know", arguments: vectors)
    func decodesAsTheDecoder(words: [String]) throws {
        let text = String(decoding: try Self.encoder().encode(words), as: UTF8.self)
        if let fast = JobColumnJSON.decode(text) {
            #expect(fast == words)
        }
        #expect(try JSONDecoder().decode([String].self, from: Data(text.utf8)) == words)
    }

    @Test("text the coder would read differently or refuse is declined", arguments: [
        "[\"a\" ,\"b\"]", "[ \"a\"]", "[\"a\\u0041\"]", "[1]", "[\"a\",]", "[\"a\"", "\"a\"", "[\"a\"\"b\"]", "[,]", "",
        "[\"é\"]",
    ])
    func declines(text: String) {
        #expect(JobColumnJSON.decode(text) == nil)
    }
}
