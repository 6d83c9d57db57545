import FoundationEssentials
import Testing

@testable import OrchestratorAPI

@Suite("A member name given twice in one object is found, with its path")
struct RepeatedKeyTests {
    static func path(_ json: String) -> [String]? {
        JSONByteReader.firstRepeatedKey(in: Data(json.utf8))
    }

    @Test("the path names every object member and array index down to the repeated name")
    func paths() {
        #expect(Self.path(#"{"a":1,"a":2}"#) == ["a"])
        #expect(Self.path(#"{"method":"m","parameters":{"spec":{"environment":{"A":"1","B":"x","A":"2"}}}}"#)
            == ["parameters", "spec", "environment", "A"])
        #expect(Self.path(#"{"parameters":{"specs":[{"argv":["x"]},{"argv":["y"],"labels":{"k":"1","k":"1"}}]}}"#)
            == ["parameters", "specs", "1", "labels", "k"])
        #expect(Self.path(#" { "x" : [ [ ] , { "y" : { } , "y" : null } ] } "#) == ["x", "1", "y"])
    }

    @Test("names Unicode holds equal are the same key, as they are to a Swift dictionary")
    func canonicallyEqualNames() {
        #expect(Self.path("{\"\u{E9}\":\"1\",\"e\u{301}\":\"2\"}") == ["\u{E9}"])
        #expect(Self.path(#"{"\u00e9":"1","e\u0301":"2"}"#) != nil)
    }

    @Test("the same name in different objects, and distinct names, are not repeats")
    func noRepeats() {
        #expect(Self.path(#"{"a":{"a":1},"b":[{"a":1},{"a":2}],"A":3}"#) == nil)
        #expect(Self.path(#"[]"#) == nil)
        #expect(Self.path(#""a""#) == nil)
        #expect(Self.path(#"{}"#) == nil)
    }

    @Test("malformed JSON is left to the decoder to report")
    func malformed() {
        #expect(Self.path(#"{"a":1,"b""#) == nil)
        #expect(Self.path(#"{"a":1,"b":}"#) == nil)
        #expect(Self.path("") == nil)
        #expect(Self.path(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)) == nil)
    }
}
