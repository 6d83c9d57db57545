import Foundation
import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Submit's and SubmitBatch's own decoder agrees with the Codable one")
struct SubmitDecoderTests {
    static func call(_ text: String, method: String = "io.orchd.Jobs.SubmitBatch") -> VarlinkMethodCall {
        VarlinkMethodCall(
            method: method, more: false, oneway: false, message: Data(text.utf8),
            peer: PeerCredentials(pid: 1, uid: 0, gid: 0))
    }

    static func batch(_ specs: String, extra: String = "") -> String {
        #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[\#(specs)]\#(extra)}}"#
    }

    /// The outcome of a decoder, comparable: the parameters' fields, or the error.
    enum Outcome: Equatable {
        case decoded([JobSpec], [String: String]?, Bool?)
        case failed(VarlinkError)
    }

    static func outcome(_ decode: () throws(VarlinkError) -> JobsInterface.SubmitBatchParameters) -> Outcome {
        do {
            let parameters = try decode()
            return .decoded(parameters.specs, parameters.environment, parameters.returnJobs)
        } catch {
            return .failed(error)
        }
    }

    /// Calls the parser reads itself (the common shapes, escapes, nulls, unknown fields).
    static let accepted: [String] = [
        batch(#"{"argv":["true"],"cwd":"/tmp","environment":{"PATH":"/usr/bin:/bin"}}"#),
        batch(#"{"argv":["true"],"cwd":"/tmp"},{"shell":"echo hi","cwd":"/"}"#, extra: #","environment":{"A":"1","NOTIFY_SOCKET":"/x"},"returnJobs":true"#),
        batch(#" { "argv" : [ "a b" , "" ] , "cwd" : "/w" , "queue" : "q-1" , "priority" : -5 , "name" : "n" , "labels" : { "k" : "v" } } "#),
        batch(#"{"argv":["x"],"cwd":"/","after":[1,2,9223372036854775807],"notBefore":"2030-01-02T03:04:05.123456Z","timeoutUSec":1000000,"maxAttempts":3,"uniqueKey":"u"}"#),
        batch(#"{"argv":["esc\"aped\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude42"],"cwd":"/é"}"#),
        batch(#"{"argv":["x"],"shell":null,"cwd":"/","environment":null,"queue":null,"priority":null,"name":null,"labels":null,"after":null,"notBefore":null,"timeoutUSec":null,"maxAttempts":null,"uniqueKey":null}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":{"a":[1,2.5e-3,true,null,"s"]}}"#, extra: #","returnJobs":null,"environment":null,"other":-0.5"#),
        #"{"parameters":{"specs":[{"argv":["x"],"cwd":"/"}]},"method":"io.orchd.Jobs.SubmitBatch","more":null,"oneway":false}"#,
        batch(#"{"argv":["x"],"cwd":"/","environment":{"NOTIFY_SOCKET":"/run","WATCHDOG_USEC":"1"}}"#),
        batch(#"{"argv":[],"cwd":"relative"}"#),  // the type accepts it; validate() refuses it later
    ]

    /// Bad or unusual calls: the parser gives up and the Codable decoder answers.
    static let declined: [String] = [
        "", "not json", "[]", "null", #"{"method":"io.orchd.Jobs.SubmitBatch"}"#,
        #"{"parameters":{"specs":[]}}"#,
        #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":null}"#,
        #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{}}"#,
        #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":{}}}"#,
        #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":null}}"#,
        #"{"method":1,"parameters":{"specs":[]}}"#,
        #"{"method":"m","more":"yes","parameters":{"specs":[]}}"#,
        batch(#"{"argv":["x"]}"#),
        batch(#"{"argv":["x"],"cwd":null}"#),
        batch(#"{"argv":["x"],"cwd":7}"#),
        batch(#"{"cwd":"/"}"#),
        batch(#"{"argv":["x"],"shell":"y","cwd":"/"}"#),
        batch(#"{"argv":"x","cwd":"/"}"#),
        batch(#"{"argv":["x",1],"cwd":"/"}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":1.5}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":1.0}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":1e2}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":"1"}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":99999999999999999999}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":-0}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":01}"#),
        batch(#"{"argv":["x"],"cwd":"/","timeoutUSec":9223372036854775808}"#),
        batch(#"{"argv":["x"],"cwd":"/","queue":"bad queue!"}"#),
        batch(#"{"argv":["x"],"cwd":"/","queue":""}"#),
        batch(#"{"argv":["x"],"cwd":"/","notBefore":"tomorrow"}"#),
        batch(#"{"argv":["x"],"cwd":"/","after":[1.5]}"#),
        batch(#"{"argv":["x"],"cwd":"/","after":["1"]}"#),
        batch(#"{"argv":["x"],"cwd":"/","labels":{"k":1}}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{"A":null}}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":[]}"#),
        batch(#"{"argv":["x"],"cwd":"/","cwd":"/again"}"#),
        batch(#"{"argv":["x"],"cwd":"/","labels":{"k":"a","k":"b"}}"#),
        batch(#"{"argv":["\ud83d"],"cwd":"/"}"#),
        batch(#"{"argv":["\ude42"],"cwd":"/"}"#),
        batch(#"{"argv":["\x"],"cwd":"/"}"#),
        batch("{\"argv\":[\"tab\traw\"],\"cwd\":\"/\"}"),
        batch(#"{"argv":["x"],"cwd":"/"},"#),
        batch(#"{"argv":["x"],"cwd":"/"}"#, extra: #","returnJobs":"yes""#),
        batch(#"{"argv":["x"],"cwd":"/"}"#, extra: #","environment":{"A":"1","A":"2"}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#),
        batch(#"{"argv":["x"],"cwd":"/"}"#) + " trailing",
        batch(#"{"argv":["x"],"cwd":"/","future":01}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":tru}"#),
        // More hostile shapes: every one must get the same answer from both decoders.
        batch(#"{"argv":["x"],"cwd":"/","future":{"a":1,"a":2}}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":1e400}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":123456789012345678901234567890}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":-}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":1.}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":.5}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":-01}"#),
        batch(#"{"argv":["x"],"cwd":"/","future":"\ud83d"}"#),
        batch(#"{"argv":["x"],"cwd":"/","\u0063wd":"/b"}"#),
        batch(#"{"argv":["x"],"\u0063wd":"/b"}"#),
        batch(#"{"argv":["x\u0000y"],"cwd":"/"}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{"\u00e9":"1","e\u0301":"2"}}"#),
        batch(#"{"argv":["x"],"cwd":"/","labels":{"e\u0301":"x"}}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":-9223372036854775808}"#),
        batch(#"{"argv":["x"],"cwd":"/","priority":-9223372036854775809}"#),
        batch(#"{"argv":["x"],"cwd":"/","after":[0,-1]}"#),
        batch(#"{"argv":["x"],"cwd":"/","timeoutUSec":1E2}"#),
        batch("{\"argv\":[\"x\"],\"cwd\":\"/\"}\u{0C}"),
        batch("{\"argv\":[\"x\"],\u{0B}\"cwd\":\"/\"}"),
        batch("{\"argv\":[\"x\"],\u{A0}\"cwd\":\"/\"}"),
        batch("{\"argv\":[\"x\u{2028}\u{7F}\"],\"cwd\":\"/\"}"),
        "\u{FEFF}" + batch(#"{"argv":["x"],"cwd":"/"}"#),
        #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["x"],"cwd":"/"}]},"method":"other"}"#,
        #"{"\u006dethod":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["x"],"cwd":"/"}]}}"#,
        batch(#"{"argv":["x"],"cwd":"/","queue":"default\u0000"}"#),
        batch(#"{"argv":["x"],"cwd":"/","notBefore":"2030-01-02T03:04:05Z\n"}"#),
        batch(#"{"argv":["x"],"cwd":"/","notBefore":"2030-01-02t03:04:05z"}"#),
        batch(#"{"argv":["x"],"cwd":"/","notBefore":"2030-01-02T03:04:05+01:00"}"#),
        batch(#"{"argv":["x"],"cwd":"/","maxAttempts":9223372036854775807}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{"A":"1",}}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{"A" "1"}}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{,}}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{"A":"1""B":"2"}}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{"A":"1","B":"2","A":"3"}}"#),
        batch(#"{"argv":["x"],"cwd":"/","labels":{"k":"v"]}"#),
        batch(#"{"argv":["x"],"cwd":"/","environment":{"A":"1""#),
    ]

    @Test("accepted calls decode to what the Codable decoder gives", arguments: accepted)
    func acceptedAgree(text: String) {
        let call = Self.call(text)
        #expect(SubmitDecoder.decodeBatch(call.message) != nil, "the parser should read this itself")
        let fast = Self.outcome { () throws(VarlinkError) in try SubmitDecoder.batchParameters(of: call) }
        let codable = Self.outcome { () throws(VarlinkError) in try call.parameters(JobsInterface.SubmitBatchParameters.self) }
        #expect(fast == codable)
        if case .failed = codable { Issue.record("the Codable decoder refused an accepted call: \(codable)") }
    }

    @Test("bad or unusual calls get the Codable decoder's answer, the same error for bad input", arguments: declined)
    func declinedAgree(text: String) {
        let call = Self.call(text)
        let fast = Self.outcome { () throws(VarlinkError) in try SubmitDecoder.batchParameters(of: call) }
        let codable = Self.outcome { () throws(VarlinkError) in try call.parameters(JobsInterface.SubmitBatchParameters.self) }
        #expect(fast == codable)
    }

    @Test("a batch of many specs is read by the parser, in order")
    func manySpecs() throws {
        let specs = (0..<1000).map { #"{"argv":["echo","\#($0)"],"cwd":"/tmp","environment":{"PATH":"/bin"}}"# }
        let parameters = try #require(SubmitDecoder.decodeBatch(Data(Self.batch(specs.joined(separator: ",")).utf8)))
        #expect(parameters.specs.count == 1000)
        #expect(parameters.specs[999].command == .argv(["echo", "999"]))
    }

    @Test("a call's header is read as VarlinkCallHeader decodes it, or left to that decoder", arguments: accepted + declined + [
        #"{"method":"io.orchd.Jobs.Wait","more":true}"#, #"{"method":"m","oneway":true,"parameters":{"ids":[1]}}"#,
        #"{"method":"m","more":null,"oneway":null}"#, #"{"method":null}"#, #"{"more":true}"#, #"{"method":"m","more":1}"#,
        #"{"method":"m","x":{"k\"":"v\u00e9","é":[1,{"a":"\u0001"}],"":{}}}"#, "{\"method\":\"m\",\"x\":{\"k\":\"raw\u{1}\"}}",
        "{\"method\":\"m\",\"x\":{\"k\u{1}\":1}}", #"{"method":"m","x":{"k":"\ud800"}}"#, #"{"method":"m","x":{"a":1,}}"#,
        #"{"method":"m","x":{"a" 1}}"#, #"{"method":"m","x":{1:2}}"#, #"{"method":"m","x":{"unterminated}}"#,
    ])
    func headerAgrees(text: String) {
        let data = Data(text.utf8)
        let codable = (try? JSONDecoder().decode(VarlinkCallHeader.self, from: data)).map { ($0.method, $0.more ?? false, $0.oneway ?? false) }
        if let fast = SubmitDecoder.header(of: data) {
            #expect(codable.map { $0 == fast } == true, "\(fast) vs \(String(describing: codable))")
        }
    }

    // MARK: - Submit

    static func submit(_ spec: String, extra: String = "") -> String {
        #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":\#(spec)\#(extra)}}"#
    }

    /// Submit calls the parser reads itself.
    static let submitAccepted: [String] = [
        submit(#"{"argv":["true"],"cwd":"/tmp","environment":{"PATH":"/usr/bin:/bin"}}"#),
        submit(#"{"shell":"echo hi","cwd":"/"}"#, extra: #","reuseExisting":true"#),
        submit(#"{"argv":["x"],"cwd":"/","uniqueKey":"u"}"#, extra: #","reuseExisting":null,"future":[1,{"a":null}]"#),
        submit(#"{"argv":["esc\"aped\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude42"],"cwd":"/é","labels":{"k":"v"},"after":[3]}"#),
        #"{"parameters":{"reuseExisting":false,"spec":{"argv":["x"],"cwd":"/"}},"method":"io.orchd.Jobs.Submit","more":false}"#,
    ]

    /// Bad or unusual Submit calls: the parser gives up and the Codable decoder answers.
    static let submitDeclined: [String] = [
        #"{"method":"io.orchd.Jobs.Submit"}"#,
        #"{"method":"io.orchd.Jobs.Submit","parameters":null}"#,
        #"{"method":"io.orchd.Jobs.Submit","parameters":{}}"#,
        #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":null}}"#,
        #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":[]}}"#,
        submit(#"{"argv":["x"]}"#),
        submit(#"{"argv":["x"],"cwd":"/"}"#, extra: #","reuseExisting":"yes""#),
        submit(#"{"argv":["x"],"cwd":"/"}"#, extra: #","spec":{"argv":["y"],"cwd":"/"}"#),
        submit(#"{"argv":["x"],"cwd":"/","priority":1.5}"#),
        submit(#"{"argv":["x"],"cwd":"/","queue":"bad name"}"#),
        submit(#"{"argv":["x"],"cwd":"/","priority":"high"}"#),
        "\u{FEFF}" + submit(#"{"argv":["x"],"cwd":"/"}"#),
    ]

    /// The outcome of a Submit decoder, comparable.
    enum SubmitOutcome: Equatable {
        case decoded(JobSpec, Bool?)
        case failed(VarlinkError)
    }

    static func submitOutcome(_ decode: () throws(VarlinkError) -> JobsInterface.SubmitParameters) -> SubmitOutcome {
        do {
            let parameters = try decode()
            return .decoded(parameters.spec, parameters.reuseExisting)
        } catch {
            return .failed(error)
        }
    }

    @Test("accepted Submit calls decode to what the Codable decoder gives", arguments: submitAccepted)
    func submitAcceptedAgree(text: String) {
        let call = Self.call(text, method: "io.orchd.Jobs.Submit")
        #expect(SubmitDecoder.decodeSubmit(call.message) != nil, "the parser should read this itself")
        let fast = Self.submitOutcome { () throws(VarlinkError) in try SubmitDecoder.submitParameters(of: call) }
        let codable = Self.submitOutcome { () throws(VarlinkError) in try call.parameters(JobsInterface.SubmitParameters.self) }
        #expect(fast == codable)
        if case .failed = codable { Issue.record("the Codable decoder refused an accepted call: \(codable)") }
    }

    @Test("bad or unusual Submit calls get the Codable decoder's answer, the same error for bad input",
          arguments: submitDeclined + declined)
    func submitDeclinedAgree(text: String) {
        let call = Self.call(text, method: "io.orchd.Jobs.Submit")
        #expect(SubmitDecoder.decodeSubmit(call.message) == nil, "the parser should leave this to the Codable decoder")
        let fast = Self.submitOutcome { () throws(VarlinkError) in try SubmitDecoder.submitParameters(of: call) }
        let codable = Self.submitOutcome { () throws(VarlinkError) in try call.parameters(JobsInterface.SubmitParameters.self) }
        #expect(fast == codable)
    }
}
