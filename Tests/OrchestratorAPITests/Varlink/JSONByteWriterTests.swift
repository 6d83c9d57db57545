import FoundationEssentials
import OrchestratorAPI
import Testing

@Suite("JSONByteWriter writes what JSONEncoder writes")
struct JSONByteWriterTests {
    static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func written(_ write: (inout JSONByteWriter) -> Void) -> String {
        var writer = JSONByteWriter()
        write(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test("strings: escaped as JSONEncoder escapes them, and read back unchanged", arguments: JobJSONSamples.hostileStrings)
    func string(_ text: String) throws {
        let written = Self.written { $0.string(text) }
        #expect(written == (try Self.encoded(text)))
        #expect(try JSONDecoder().decode(String.self, from: Data(written.utf8)) == text)
    }

    @Test("every control character has an escape; DEL and U+2028 pass through")
    func controlCharacters() {
        #expect(Self.written { $0.string("\u{0}\u{1F}\u{8}\u{C}\n\r\t\"\\/") } == #""\u0000\u001f\b\f\n\r\t\"\\/""#)
        #expect(Self.written { $0.string("\u{7F}\u{2028}é") } == "\"\u{7F}\u{2028}é\"")
    }

    @Test("integers at the edges of their types", arguments: [Int64.min, -1, 0, 9, 10, 99, 100, 1_000_000, .max])
    func integer(_ value: Int64) throws {
        #expect(Self.written { $0.integer(value) } == (try Self.encoded(value)))
        #expect(Self.written { $0.integer(UInt64(value.magnitude)) } == String(value.magnitude))
    }

    @Test("string objects, empty and sorted, and absent values as null")
    func objectsAndNull() throws {
        let labels = ["b": "2", "a": "1", "é": "x", "A": "0", "a10": "", "a9": "", "B": "", "_": "", "Z": ""]
        #expect(Self.written { $0.object(labels) } == (try Self.encoded(labels)))
        #expect(Self.written { $0.object([:]) } == "{}")
        #expect(Self.written { $0.string(nil as String?) } == "null")
        #expect(Self.written { $0.integer(nil as Int64?) } == "null")
        #expect(Self.written { $0.timestamp(nil) } == "null")
        #expect(Self.written { $0.array([String]()) } == "[]")
    }
}
