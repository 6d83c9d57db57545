import FoundationEssentials
import Testing

@testable import OrchestratorAPI

@Suite("A strict scan finds JSON that is not strict and names given twice, with their paths")
struct StrictScanTests {
    static func scan(_ json: String) -> JSONByteReader.StrictScan {
        JSONByteReader.strictScan(of: Data(json.utf8))
    }

    @Test("the path names every object member and array index down to the repeated name")
    func paths() {
        #expect(Self.scan(#"{"a":1,"a":2}"#) == .repeatedName(["a"]))
        #expect(Self.scan(#"{"method":"m","parameters":{"spec":{"environment":{"A":"1","B":"x","A":"2"}}}}"#)
            == .repeatedName(["parameters", "spec", "environment", "A"]))
        #expect(Self.scan(#"{"parameters":{"specs":[{"argv":["x"]},{"argv":["y"],"labels":{"k":"1","k":"1"}}]}}"#)
            == .repeatedName(["parameters", "specs", "1", "labels", "k"]))
        #expect(Self.scan(#" { "x" : [ [ ] , { "y" : { } , "y" : null } ] } "#) == .repeatedName(["x", "1", "y"]))
    }

    @Test("numbers outside 0 through Int32.max, or not written as integers, are listed with their paths and bytes; others are not")
    func unusualNumbers() {
        let json = #"{"a":[0,2147483647,2147483648,-1],"b":{"c":1e3,"d":1.0,"e":99999999999999999999},"f":7}"#
        var numbers: [JSONByteReader.UnusualNumber] = []
        #expect(JSONByteReader.strictScan(of: Data(json.utf8), unusualNumbers: &numbers) == .clean)
        let bytes = Array(json.utf8)
        #expect(numbers.map(\.path) == [["a", "2"], ["a", "3"], ["b", "c"], ["b", "d"], ["b", "e"]])
        #expect(numbers.map { String(decoding: bytes[$0.range], as: UTF8.self) }
            == ["2147483648", "-1", "1e3", "1.0", "99999999999999999999"])
        #expect(numbers.map(\.isIntegerForm) == [true, true, false, false, true])
    }

    @Test("a name the top-level object repeats is reported before a deeper one, wherever it comes")
    func topLevelFirst() {
        #expect(Self.scan(#"{"parameters":{"a":1,"a":2},"method":"io.orchd.Manager.Ping","method":"io.orchd.Manager.Shutdown"}"#)
            == .repeatedName(["method"]))
    }

    @Test("names Unicode holds equal are the same name, as they are to a Swift dictionary")
    func canonicallyEqualNames() {
        #expect(Self.scan("{\"\u{E9}\":\"1\",\"e\u{301}\":\"2\"}") == .repeatedName(["\u{E9}"]))
        #expect(Self.scan(#"{"\u00e9":"1","e\u0301":"2"}"#) != .clean)
        #expect(Self.scan(#"{"\u0041":"1","A":"2"}"#) == .repeatedName(["A"]))
    }

    @Test("the same name in different objects, and distinct names, are strict and clean")
    func clean() {
        #expect(Self.scan(#"{"a":{"a":1},"b":[{"a":1},{"a":2}],"A":3,"n":-1.5e+3,"t":true,"f":false,"z":null}"#) == .clean)
        #expect(Self.scan(#"[]"#) == .clean)
        #expect(Self.scan(#""a\/\"\u20ac\ud83d\ude00""#) == .clean)
        #expect(Self.scan(#"{}"#) == .clean)
        // Deeper than the hand-written decoders go (64), within JSONDecoder's 512.
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(Self.scan(#"{"x":"# + deep + #","a":{"b":1,"b":2}}"#) == .repeatedName(["a", "b"]))
    }

    @Test("JSON that JSONDecoder reads but that is not strict is reported where it stops")
    func notStrict() {
        #expect(Self.scan(#"{"a":[1,]}"#) == .notStrict(["a", "1"]))
        #expect(Self.scan(#"{"a":1,}"#) == .notStrict([]))
        #expect(Self.scan(#"{"a":"\ud800"}"#) == .notStrict(["a"]))
        #expect(Self.scan("{\"a\":\"\t\"}") == .notStrict(["a"]))
        #expect(Self.scan(#"{"a":01}"#) == .notStrict(["a"]))
        #expect(Self.scan(#"{"a":1.}"#) == .notStrict(["a"]))
        #expect(Self.scan(#"{"a":1} x"#) == .notStrict([]))
        #expect(Self.scan("") == .notStrict([]))
        let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(Self.scan(tooDeep) != .clean)
        var invalidUTF8 = Array(#"{"a":""#.utf8)
        invalidUTF8 += [0xFF, UInt8(ascii: "\""), UInt8(ascii: "}")]
        #expect(JSONByteReader.strictScan(of: invalidUTF8) == .notStrict(["a"]))
    }

    @Test("a non-strict place before a repeated name is what the scan reports")
    func notStrictBeforeRepeat() {
        #expect(Self.scan(#"{"x":[1,],"a":1,"a":2}"#) == .notStrict(["x", "1"]))
    }

    @Test("a name with more than 30 combining marks in a row is not stream-safe and is refused before it is hashed")
    func unsafeNames() {
        let marks = { (count: Int) in "a" + String(repeating: "\u{301}\u{316}", count: count / 2) }
        #expect(JSONByteReader.isStreamSafe(marks(30)))
        #expect(!JSONByteReader.isStreamSafe(marks(32)))
        #expect(JSONByteReader.isStreamSafe("plain ASCII"))
        #expect(JSONByteReader.isStreamSafe(String(repeating: "\u{E9}", count: 1000)), "precomposed letters are starters")
        let long = marks(40_000)
        #expect(Self.scan(#"{"parameters":{"x":{""# + long + #"":1}}}"#) == .unsafeName(["parameters", "x"]))
        #expect(Self.scan(#"{""# + long + #"":1}"#) == .unsafeName([]))
        // Values are not hashed: a long run of marks in one is strict JSON.
        #expect(Self.scan(#"{"a":""# + long + #""}"#) == .clean)
        let map = Data(("{\"" + long + "\":\"1\"}").utf8)
        #expect(map.withUnsafeBytes { raw in
            var json = JSONByteReader(bytes: raw.bindMemory(to: UInt8.self))
            return json.stringMap()
        } == nil, "the fast readers give up on it")
    }
}
