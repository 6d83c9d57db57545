import FoundationEssentials
import Testing

@testable import OrchestratorAPI

@Suite("Error replies read without JSONDecoder read as JSONDecoder reads them, or are left to it")
struct ErrorReplyReadTests {
    /// What `VarlinkClient` makes of `text` through `JSONDecoder`: the error, or `nil` when the
    /// envelope carries none or is not one.
    static func codable(_ text: String) -> VarlinkError? {
        let data = Data(text.utf8)
        guard let envelope = try? JSONDecoder().decode(VarlinkReply<VarlinkNoParameters>.self, from: data),
              let name = envelope.error else { return nil }
        let parameters = try? JSONDecoder().decode(VarlinkReply<[String: JSONValue]>.self, from: data).parameters
        return VarlinkError(name, (parameters ?? nil) ?? [:])
    }

    static let texts: [String] = [
        #"{"error":"io.orchd.Jobs.NoSuchJob","parameters":{"id":99}}"#,
        #"{"parameters":{"id":99,"message":"no job 99"},"error":"io.orchd.Jobs.NoSuchJob"}"#,
        #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"ids"}}"#,
        #"{"error":"x.Y"}"#, #"{"error":"x.Y","parameters":null}"#, #"{"error":"x.Y","parameters":{}}"#,
        #"{"error":"x.Y","continues":true}"#, #"{"error":"x.Y","continues":null}"#, #"{"error":"x.Y","continues":"no"}"#,
        #"{"error":"x.Y","parameters":{"a":[1,-2,true,null,"s",{"b":[]}],"big":9007199254740993,"neg":-9223372036854775808}}"#,
        #"{"error":"x.Y","parameters":{"f":1.5}}"#, #"{"error":"x.Y","parameters":{"e":1e3}}"#, #"{"error":"x.Y","parameters":{"z":-0}}"#,
        #"{"error":"x.Y","parameters":{"a":1,"a":2}}"#, #"{"error":"x.Y","error":"x.Z"}"#, #"{"error":null}"#, #"{"error":5}"#,
        #"{"error":"x.Y","parameters":[]}"#, #"{"error":"x.Y","parameters":"p"}"#, #"{"error":"x.Y","extra":{"deep":[[[]]]}}"#,
        #"{"error":"caf\u00e9 \ud83d\ude00","parameters":{"message":"line\nnext \"quoted\""}}"#, #"{"parameters":{}}"#, "{}", "[]",
        #"{"error":"x.Y""#, " \n{ \"error\" : \"x.Y\" , \"parameters\" : { \"id\" : 1 } } \n",
    ]

    @Test("each error text reads to the error JSONDecoder gives, or is left to it", arguments: texts)
    func agreement(text: String) {
        let fast = VarlinkClient.readError(Array(text.utf8))
        let codable = Self.codable(text)
        if let fast { #expect(fast == codable, "\(text)") }
        if codable == nil { #expect(fast == nil, "\(text)") }
    }

    @Test("a whole number in error parameters is written as an integer, as the interfaces declare IDs; a fraction as a number")
    func wholeNumbersAsIntegers() throws {
        let parameters: [String: JSONValue] = ["id": .number(4_611_686_018_427_387_904), "small": .number(7), "negative": .number(-3), "f": .number(1.5)]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(parameters), as: UTF8.self)
        #expect(text == #"{"f":1.5,"id":4611686018427387904,"negative":-3,"small":7}"#)
    }

    @Test("a job ID past 2^53 in an error reply is written and read back exactly, by hand and by JSONDecoder",
          arguments: [Int64(9_007_199_254_740_993), .max, .min])
    func exactIDs(id: Int64) throws {
        let error = JobsInterface.noSuchJob(JobID(rawValue: id))
        let text = #"{"error":"\#(error.name)","parameters":"# + JSONValue.object(error.parameters).jsonText + "}"
        #expect(text.contains("\"id\":\(id)"), "\(text)")
        #expect(VarlinkClient.readError(Array(text.utf8))?.parameters["id"] == .integer(id), "\(text)")
        #expect(Self.codable(text)?.parameters["id"] == .integer(id), "\(text)")
    }

    @Test("orchd's own error replies are read by hand")
    func orchdErrors() {
        for error in [
            VarlinkError(JobsInterface.Errors.noSuchJob, ["id": .integer(99)]), VarlinkError.invalidParameter("ids"),
            VarlinkError(JobsInterface.Errors.permissionDenied, ["message": .string("job 5 belongs to uid 1000")]),
        ] {
            let text = #"{"error":"\#(error.name)","parameters":"# + JSONValue.object(error.parameters).jsonText + "}"
            #expect(VarlinkClient.readError(Array(text.utf8)) == error, "\(text)")
        }
    }
}

extension JSONValue {
    /// The value as `JSONEncoder` writes it.
    var jsonText: String {
        String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
    }
}
