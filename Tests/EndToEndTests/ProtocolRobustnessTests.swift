import Foundation
import Glibc
import Synchronization
import Testing
import TestWaitLimits

/// The daemon never crashes on client input: bad messages get a Varlink error and a closed
/// connection, and other clients are served throughout.
@Suite("Varlink robustness end to end")
struct ProtocolRobustnessTests {
    @Test("a List without more gives every matching job in ID order however many there are (past one page, it is read a page per turn), and the newest N with a limit")
    func listWithoutMoreReadsEveryPage() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["pause", "default"]).status == 0)
        let file = daemon.directory + "/jobs.txt"
        try String(repeating: "true\n", count: 2_500).write(toFile: file, atomically: true, encoding: .utf8)
        let ids = try daemon.orchctl(["submit", "--batch", file]).standardOutput.split(separator: "\n").compactMap { Int($0) }
        #expect(ids.count == 2_500)
        func list(_ parameters: String) throws -> [Int] {
            let socket = try RawSocket(path: daemon.socketPath)
            #expect(socket.send(Array(#"{"method":"io.orchd.Jobs.List","parameters":\#(parameters)}"#.utf8) + [0]))
            let reply = try #require(socket.readMessages(untilClosed: false, timeout: 60).messages.first)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
            let jobs = try #require((object["parameters"] as? [String: Any])?["jobs"] as? [[String: Any]], "\(reply.prefix(300))")
            return jobs.compactMap { $0["id"] as? Int }
        }
        #expect(try list("{}") == ids)
        #expect(try list(#"{"state":"queued","limit":1500}"#) == Array(ids.suffix(1_500)))
        #expect(try list(#"{"limit":10}"#) == Array(ids.suffix(10)))
        #expect(try list(#"{"ids":\#(Array(ids.prefix(1_200)))}"#) == Array(ids.prefix(1_200)))
        #expect(try list(#"{"state":"running"}"#) == [])
    }

    @Test("listings whose clients hang up at once are dropped unread: the daemon goes on serving and running jobs")
    func hungUpListings() throws {
        let daemon = try TestDaemon()
        let file = daemon.directory + "/jobs.txt"
        try String(repeating: "true\n", count: 1_500).write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try daemon.orchctl(["submit", "--batch", file]).status == 0)
        for _ in 0..<200 {
            let socket = try RawSocket(path: daemon.socketPath)
            #expect(socket.send(Array(#"{"method":"io.orchd.Jobs.List","parameters":{"allUsers":true}}"#.utf8) + [0]))
        }
        let waited = try daemon.orchctl(["submit", "--wait", "--", "true"])
        #expect(waited.status == 0, "\(waited)")
        #expect(try daemon.orchctl(["wait", "--all"]).status == 0)
    }

    @Test("malformed JSON gets an error reply and the connection is closed")
    func malformedJSON() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        socket.send(Array("{not json".utf8) + [0])
        let (messages, closed) = socket.readMessages(untilClosed: true)
        #expect(closed)
        #expect(messages.first?.contains("io.orchd.Manager.MalformedMessage") == true, "\(messages)")
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("a start time whose UTC year has not four digits (year 0000 with a positive offset) is refused, and listings go on working")
    func startTimeOutsideFourDigitYears() throws {
        let daemon = try TestDaemon()
        for notBefore in ["0000-01-01T00:00:00+23:59", "9999-12-31T23:59:59-00:01"] {
            let socket = try RawSocket(path: daemon.socketPath)
            let call = #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","notBefore":"\#(notBefore)"}}}"#
            #expect(socket.send(Array(call.utf8) + [0]))
            let reply = try #require(socket.readMessages(untilClosed: false, timeout: 60).messages.first)
            #expect(reply.contains("org.varlink.service.InvalidParameter") && reply.contains("spec.notBefore"), "\(notBefore): \(reply)")
        }
        let listed = try daemon.orchctl(["status"])
        #expect(listed.status == 0, "\(listed)")
        let refused = try daemon.orchctl(["submit", "--at", "0000-01-01T00:00:00+01:00", "--", "true"])
        #expect(refused.status == 64 && !refused.standardError.contains("00-1-"), "\(refused)")
    }

    @Test("a client that shuts down its sending side after its calls gets every reply in order, one still waiting for its job too, then the connection closes")
    func halfClosedClientIsAnswered() throws {
        let daemon = try TestDaemon()
        let submit = #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/"}}}"#
        let socket = try RawSocket(path: daemon.socketPath)
        #expect(socket.send(Array(Array(repeating: submit, count: 5).joined(separator: "\0").utf8) + [0]))
        socket.shutdownWrite()
        let (replies, closed) = socket.readMessages(untilClosed: true, timeout: 30)
        #expect(closed)
        let ids = replies.compactMap { $0.firstMatch(of: /"id":(\d+)/).map { Int($0.1)! } }
        #expect(ids == [1, 2, 3, 4, 5], "\(replies)")

        // A Wait sent before the end of the stream is answered when its job ends.
        let gate = daemon.directory + "/gate"
        try #require(mkfifo(gate, 0o600) == 0)
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "read x < '\(gate)'"]).line
        let waiter = try RawSocket(path: daemon.socketPath)
        #expect(waiter.send(Array(#"{"method":"io.orchd.Jobs.Wait","parameters":{"ids":[\#(id)]}}"#.utf8) + [0]))
        waiter.shutdownWrite()
        #expect(!waiter.waitReadable(timeout: 0.2) || waiter.readMessages(untilClosed: false, timeout: 0.1).messages.isEmpty,
            "no answer while the job runs")
        let gateFD = try openForWriting(fifo: gate)
        _ = write(gateFD, "x\n", 2)
        close(gateFD)
        let (answer, answerClosed) = waiter.readMessages(untilClosed: true, timeout: 30)
        #expect(answerClosed)
        #expect(answer.count == 1 && answer[0].contains("\"succeeded\""), "\(answer)")
    }

    @Test("calls before a malformed message are answered, in whatever pieces the bytes arrive, then the error closes the connection")
    func callsBeforeAMalformedMessage() throws {
        let daemon = try TestDaemon()
        let ping = #"{"method":"io.orchd.Manager.Ping"}"#
        let submit = #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/"}}}"#
        for garbage in [#"{"method":"io.orchd.Manager.Ping",}"#, "[1]", "{not json"] {
            let socket = try RawSocket(path: daemon.socketPath)
            #expect(socket.send(Array([ping, submit, garbage, submit].joined(separator: "\0").utf8) + [0]))
            let (replies, closed) = socket.readMessages(untilClosed: true, timeout: 30)
            #expect(closed, "\(garbage)")
            #expect(replies.count == 3, "\(garbage): \(replies)")
            #expect(replies.first == "{}" || replies.first?.contains("parameters") == true, "\(garbage): \(replies)")
            #expect(replies.dropFirst().first?.contains("\"job\"") == true, "\(garbage): \(replies)")
            #expect(replies.last?.contains("io.orchd.Manager.MalformedMessage") == true, "\(garbage): \(replies)")
        }
        let jobs = try daemon.orchctl(["--json", "status", "--all"]).standardOutput
        #expect(jobs.components(separatedBy: "\"id\"").count == 4, "one job per connection, none after the error: \(jobs)")
    }

    @Test("a message over 1 MiB is refused without waiting for its end")
    func oversizedMessage() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        socket.send([UInt8](repeating: UInt8(ascii: "a"), count: (1 << 20) + 10))
        let (messages, closed) = socket.readMessages(untilClosed: true)
        #expect(closed)
        #expect(messages.first?.contains("MessageTooLarge") == true, "\(messages)")
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("unknown methods, bad parameters and missing 'more' get the Varlink service errors")
    func serviceErrors() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        let calls = [
            #"{"method":"io.orchd.Jobs.Explode"}"#,
            #"{"method":"com.example.Nothing.Here"}"#,
            #"{"method":"io.orchd.Jobs.Get","parameters":{"id":"seven"}}"#,
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":[],"cwd":"/"}}}"#,
            #"{"method":"io.orchd.Jobs.Logs","parameters":{"id":1,"stream":"stdout"}}"#,
            #"{"method":"io.orchd.Jobs.Get","parameters":{"id":999}}"#,
            #"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"io.orchd.Jobs"}}"#,
        ]
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        #expect(replies[0].contains("org.varlink.service.MethodNotFound"))
        #expect(replies[1].contains("org.varlink.service.InterfaceNotFound"))
        #expect(replies[2].contains("org.varlink.service.InvalidParameter") && replies[2].contains("id"))
        #expect(replies[3].contains("io.orchd.Jobs.InvalidJobSpec"))
        #expect(replies[4].contains("org.varlink.service.ExpectedMore"))
        #expect(replies[5].contains("io.orchd.Jobs.NoSuchJob"))
        #expect(replies[6].contains("method Submit"))
    }

    @Test("GetUserNames answers the names the password database has and leaves out the rest; a uid that is no uid, or over 1000 of them, is refused")
    func userNames() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        var unknown: UInt32 = 3_900_000_000
        while getpwuid(unknown) != nil { unknown += 1 }
        let many = (0...1000).map(String.init).joined(separator: ",")
        let calls = [
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[0,0,\#(unknown)]}}"#,
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[]}}"#,
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[-1]}}"#,
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[4294967296]}}"#,
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":["root"]}}"#,
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{}}"#,
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[\#(many)]}}"#,
        ]
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        let names = try JSONSerialization.jsonObject(with: Data(replies[0].utf8)) as? [String: Any]
        #expect((names?["parameters"] as? [String: Any])?["names"] as? [String: String] == ["0": "root"], "\(replies[0])")
        #expect(replies[1].contains(#""names":{}"#), "\(replies[1])")
        for reply in replies[2...] {
            #expect(reply.contains("org.varlink.service.InvalidParameter"), "\(reply)")
        }
        for reply in replies[2...4] {
            #expect(reply.contains(#""parameter":"uids.0""#), "\(reply)")
        }
        for reply in replies[5...] {
            #expect(reply.contains(#""parameter":"uids""#), "\(reply)")
        }
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    /// Every integer field of every method, as a call with `#NUMBER` where the number goes, and
    /// the name an error about it gives.
    static let integerFields: [(call: String, field: String)] = [
        (#"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","priority":#NUMBER}}}"#, "spec.priority"),
        (#"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","timeoutUSec":#NUMBER}}}"#, "spec.timeoutUSec"),
        (#"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","maxAttempts":#NUMBER}}}"#, "spec.maxAttempts"),
        (#"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","after":[#NUMBER]}}}"#, "spec.after.0"),
        (#"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["true"],"cwd":"/"},{"argv":["true"],"cwd":"/","priority":#NUMBER}]}}"#, "specs.1.priority"),
        (#"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["true"],"cwd":"/","timeoutUSec":#NUMBER}]}}"#, "specs.0.timeoutUSec"),
        (#"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["true"],"cwd":"/","maxAttempts":#NUMBER}]}}"#, "specs.0.maxAttempts"),
        (#"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["true"],"cwd":"/","after":[1,#NUMBER]}]}}"#, "specs.0.after.1"),
        (#"{"method":"io.orchd.Jobs.Get","parameters":{"id":#NUMBER}}"#, "id"),
        (#"{"method":"io.orchd.Jobs.Retry","parameters":{"id":#NUMBER}}"#, "id"),
        (#"{"method":"io.orchd.Jobs.Suspend","parameters":{"id":#NUMBER}}"#, "id"),
        (#"{"method":"io.orchd.Jobs.Continue","parameters":{"id":#NUMBER}}"#, "id"),
        (#"{"method":"io.orchd.Jobs.List","parameters":{"limit":#NUMBER}}"#, "limit"),
        (#"{"method":"io.orchd.Jobs.List","parameters":{"ids":[1,2,#NUMBER]}}"#, "ids.2"),
        (#"{"method":"io.orchd.Jobs.Cancel","parameters":{"ids":[#NUMBER]}}"#, "ids.0"),
        (#"{"method":"io.orchd.Jobs.Hold","parameters":{"ids":[#NUMBER]}}"#, "ids.0"),
        (#"{"method":"io.orchd.Jobs.Release","parameters":{"ids":[#NUMBER]}}"#, "ids.0"),
        (#"{"method":"io.orchd.Jobs.Wait","parameters":{"ids":[#NUMBER]}}"#, "ids.0"),
        (#"{"method":"io.orchd.Jobs.Edit","parameters":{"id":#NUMBER,"name":"x"}}"#, "id"),
        (#"{"method":"io.orchd.Jobs.Edit","parameters":{"id":1,"priority":#NUMBER}}"#, "priority"),
        (#"{"method":"io.orchd.Jobs.Prune","parameters":{"olderThanUSec":#NUMBER}}"#, "olderThanUSec"),
        (#"{"method":"io.orchd.Jobs.Logs","more":true,"parameters":{"id":#NUMBER,"stream":"stdout"}}"#, "id"),
        (#"{"method":"io.orchd.Jobs.Logs","more":true,"parameters":{"id":1,"stream":"stdout","offset":#NUMBER}}"#, "offset"),
        (#"{"method":"io.orchd.Jobs.Logs","more":true,"parameters":{"id":1,"stream":"stdout","tailLines":#NUMBER}}"#, "tailLines"),
        (#"{"method":"io.orchd.Jobs.Logs","more":true,"parameters":{"id":1,"stream":"stdout","attempt":#NUMBER}}"#, "attempt"),
        (#"{"method":"io.orchd.Jobs.Logs","more":true,"parameters":{"id":1,"stream":"stdout","fromAttempt":#NUMBER}}"#, "fromAttempt"),
        (#"{"method":"io.orchd.Jobs.Subscribe","more":true,"parameters":{"since":#NUMBER}}"#, "since"),
        (#"{"method":"io.orchd.Jobs.Subscribe","more":true,"parameters":{"jobId":#NUMBER}}"#, "jobId"),
        (#"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[0,#NUMBER]}}"#, "uids.1"),
        (#"{"method":"io.orchd.Queues.Set","parameters":{"name":"default","concurrency":#NUMBER}}"#, "concurrency"),
        (#"{"method":"io.orchd.Queues.Set","parameters":{"name":"default","retryBaseUSec":#NUMBER}}"#, "retryBaseUSec"),
        (#"{"method":"io.orchd.Queues.Set","parameters":{"name":"default","retryCapUSec":#NUMBER}}"#, "retryCapUSec"),
        (#"{"method":"io.orchd.Queues.Add","parameters":{"name":"q","maxRunningPerUser":#NUMBER}}"#, "maxRunningPerUser"),
    ]

    @Test("a number an integer field cannot take (too large for any, a fraction, or not written as an integer) is refused naming the field, for every integer field of every method, and nothing is stored",
          arguments: ["99999999999999999999", "-9223372036854775809", "1.5", "1e3", "1E+2", "1.0", "-0.0"])
    func unfitNumbers(number: String) throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        let calls = Self.integerFields.map { $0.call.replacingOccurrences(of: "#NUMBER", with: number) }
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        for (reply, (call, field)) in zip(replies, zip(calls, Self.integerFields.map(\.field))) {
            #expect(reply == #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"\#(field)"}}"#, "\(call)")
        }
        let status = try daemon.orchctl(["--json", "status", "--all"])
        #expect(status.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(status)")
        let queues = try daemon.orchctl(["queues"]).standardOutput
        #expect(!queues.split(separator: "\n").contains { $0.hasPrefix("q ") }, "no queue was added: \(queues)")
    }

    @Test("a uid that is negative or past UInt32 is refused naming its element; an integer past 32 bits where the type holds it, and a number of any form in a member orchd does not read, are taken")
    func integersTakenAndRefusedByType() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        let calls = [
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[0,-1]}}"#,
            #"{"method":"io.orchd.Manager.GetUserNames","parameters":{"uids":[4294967296]}}"#,
            #"{"method":"io.orchd.Jobs.List","parameters":{"limit":5000000000,"ids":[9223372036854775807]}}"#,
            #"{"method":"io.orchd.Jobs.Get","parameters":{"id":1,"future":1.5e300}}"#,
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","future":[1e3,-0.5]},"future":1.5}}"#,
        ]
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        #expect(replies[0] == #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"uids.1"}}"#)
        #expect(replies[1] == #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"uids.0"}}"#)
        #expect(replies[2] == #"{"parameters":{"jobs":[]}}"#, "\(replies[2])")
        #expect(replies[3].contains("io.orchd.Jobs.NoSuchJob"), "\(replies[3])")
        #expect(replies[4].contains(#""job":{"#), "\(replies[4])")
    }

    @Test("calls pipelined behind a Wait are read only so far ahead: the sender stalls instead of orchd growing, and every call is answered in order once the Wait ends")
    func pipelinedCallsHeldInTheSocket() throws {
        let daemon = try TestDaemon()
        let job = try daemon.orchctl(["submit", "--delay", "1h", "--", "true"]).line
        let socket = try RawSocket(path: daemon.socketPath)
        let pings = 200_000
        let bytes = Array(#"{"method":"io.orchd.Jobs.Wait","parameters":{"ids":[\#(job)]}}"#.utf8) + [0]
            + Array(repeating: Array(#"{"method":"io.orchd.Manager.Ping"}"#.utf8) + [0], count: pings).joined()
        // orchd reads at most 1,000 calls (or 4 MiB) ahead of the Wait; then the socket fills.
        let sent = socket.send(bytes, stallingAfter: 2)
        #expect(sent < bytes.count / 2, "\(sent) of \(bytes.count) bytes were taken while the Wait held the connection")
        #expect(try daemon.orchctl(["cancel", job]).status == 0)
        let replies = socket.exchange(bytes[sent...], until: 1 + pings)
        #expect(replies.count == 1 + pings, "\(replies.count) replies")
        #expect(replies.first?.contains(#""jobs""#) == true, "the Wait's reply comes first: \(replies.first ?? "")")
        #expect(replies.dropFirst().allSatisfy { $0 == #"{"parameters":{}}"# }, "then one Ping reply per Ping")
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("a name given twice in one object is refused naming it, for every method, and nothing is stored")
    func repeatedNames() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        let calls = [
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","environment":{"A":"1","A":"2"}}}}"#,
            #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["true"],"cwd":"/","environment":{}}],"environment":{"\u00e9":"1","e\u0301":"2"}}}"#,
            #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["true"],"cwd":"/","environment":{},"labels":{"k":"1","k":"2"}}]}}"#,
            #"{"method":"io.orchd.Jobs.Get","parameters":{"id":1,"id":2}}"#,
        ]
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        for reply in replies { #expect(reply.contains("org.varlink.service.InvalidParameter"), "\(reply)") }
        #expect(replies[0].contains("spec.environment.A"), "\(replies[0])")
        #expect(replies[1].contains("environment."), "\(replies[1])")
        #expect(replies[2].contains("specs.0.labels.k"), "\(replies[2])")
        #expect(replies[3].contains(#""id""#), "\(replies[3])")
        let status = try daemon.orchctl(["--json", "status", "--all"])
        #expect(status.status == 0)
        #expect(status.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(status.standardOutput)")
    }

    @Test("a name given twice past what the fast decoders read (deeper than 64 levels) is refused too, and nothing is stored")
    func repeatedNamesInDeepMessages() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        let calls = [
            #"{"x":"# + deep + #","method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","environment":{"A":"1","A":"2"}}}}"#,
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"x":"# + deep + #","spec":{"argv":["true"],"cwd":"/","labels":{"k":"1","k":"2"}}}}"#,
        ]
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        #expect(replies[0].contains("org.varlink.service.InvalidParameter") && replies[0].contains("spec.environment.A"), "\(replies[0])")
        #expect(replies[1].contains("org.varlink.service.InvalidParameter") && replies[1].contains("spec.labels.k"), "\(replies[1])")
        let status = try daemon.orchctl(["--json", "status", "--all"])
        #expect(status.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(status)")
    }

    @Test("a call that is not strict JSON, or gives 'method' twice, is a malformed message: nothing runs and the connection closes")
    func notStrictOrTwoMethods() throws {
        let daemon = try TestDaemon()
        #expect(try daemon.orchctl(["submit", "--", "true"]).status == 0)
        let messages = [
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true",],"cwd":"/","environment":{"A":"1","A":"2"}}}}"#,
            #"{"method":"io.orchd.Jobs.Edit","parameters":{"id":1,"x":[1,],"name":"first","name":"second"}}"#,
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","labels":{"k":"\ud800"}}}}"#,
            #"{"parameters":{"a":1,"a":2},"method":"io.orchd.Manager.Ping","method":"io.orchd.Manager.Shutdown"}"#,
            #"{"method":"io.orchd.Jobs.Wait","more":true,"more":false,"parameters":{"ids":[1]}}"#,
        ]
        for message in messages {
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send(Array(message.utf8) + [0])
            let (replies, closed) = socket.readMessages(untilClosed: true)
            #expect(closed, "\(message)")
            #expect(replies.first?.contains("io.orchd.Manager.MalformedMessage") == true, "\(message): \(replies)")
        }
        let jobs = try daemon.orchctl(["--json", "status", "--all"])
        #expect(jobs.standardOutput.components(separatedBy: "\"id\"").count == 2, "one job, unedited: \(jobs)")
        #expect(!jobs.standardOutput.contains("first") && !jobs.standardOutput.contains("second"), "\(jobs)")
        #expect(try daemon.orchctl(["ping"]).status == 0, "orchd is still running")
    }

    @Test("a name or unique key with a long run of combining marks is refused at once, not normalised for seconds")
    func combiningMarkRuns() throws {
        let daemon = try TestDaemon()
        let marks = "a" + String(repeating: #"\u0301\u0316"#, count: 20_000)
        let socket = try RawSocket(path: daemon.socketPath)
        let calls = [
            #"{"method":"io.orchd.Jobs.Get","parameters":{"id":1,"x":{""# + marks + #"":1}}}"#,
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","environment":{""# + marks + #"":"1"}}}}"#,
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","uniqueKey":""# + marks + #""}}}"#,
        ]
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        #expect(replies[0].contains("org.varlink.service.InvalidParameter") && replies[0].contains(#""x""#), "\(replies[0])")
        #expect(replies[1].contains("org.varlink.service.InvalidParameter") && replies[1].contains("spec.environment"), "\(replies[1])")
        #expect(replies[2].contains("io.orchd.Jobs.InvalidJobSpec") && replies[2].contains("combining marks in a row"), "\(replies[2])")
        // At the top of the call, with the header parser giving up: a malformed message.
        let top = try RawSocket(path: daemon.socketPath)
        top.send(Array((#"{"method":"io.orchd.Manager.Ping",""# + marks + #"":1}"#).utf8) + [0])
        let (messages, closed) = top.readMessages(untilClosed: true)
        #expect(closed && messages.first?.contains("io.orchd.Manager.MalformedMessage") == true, "\(messages)")
        let status = try daemon.orchctl(["--json", "status", "--all"])
        #expect(status.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(status)")
    }

    @Test("a NUL byte in a job's name, label or unique key is refused naming the field, in Submit and SubmitBatch")
    func nulInMetadata() throws {
        let daemon = try TestDaemon()
        let socket = try RawSocket(path: daemon.socketPath)
        let calls = [
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","name":"a\u0000b"}}}"#,
            #"{"method":"io.orchd.Jobs.Submit","parameters":{"spec":{"argv":["true"],"cwd":"/","labels":{"k":"\u0000"}}}}"#,
            #"{"method":"io.orchd.Jobs.SubmitBatch","parameters":{"specs":[{"argv":["true"],"cwd":"/","uniqueKey":"\u0000"}]}}"#,
        ]
        let replies = Self.replies(to: calls, on: socket)
        #expect(replies.count == calls.count, "\(replies)")
        guard replies.count == calls.count else { return }
        for (reply, field) in zip(replies, ["name", "labels", "uniqueKey"]) {
            #expect(reply.contains("io.orchd.Jobs.InvalidJobSpec") && reply.contains("\(field) contains a NUL byte"), "\(reply)")
        }
        let status = try daemon.orchctl(["--json", "status", "--all"])
        #expect(status.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(status)")
    }

    @Test("clients holding every file descriptor orchd may open: it pauses accepting and says so (no busy loop on the pending connection), and serves again once they close")
    func descriptorExhaustion() throws {
        let daemon = try TestDaemon(launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        do {
            // More connections than orchd has descriptors: the rest wait in the listen backlog.
            let flood = try (0..<100).map { _ in try RawSocket(path: daemon.socketPath) }
            #expect(daemon.waitForLog(containing: "out of file descriptors"), "\(daemon.daemonLog)")
            #expect(flood.count == 100)
        }
        #expect(try daemon.orchctl(["ping"]).status == 0, "\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["submit", "--wait", "--", "true"]).status == 0, "\(daemon.daemonLog)")
    }

    @Test("idle connections holding every file descriptor orchd may open are closed, longest idle first, so that other clients are served; one with a call in progress stays")
    func idleConnectionsMakeRoom() throws {
        let daemon = try TestDaemon(launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let id = try daemon.orchctl(["submit", "--", "sleep", "300"]).line
        let waiting = try RawSocket(path: daemon.socketPath)
        waiting.send(Array(#"{"method":"io.orchd.Jobs.Wait","parameters":{"ids":[\#(id)]}}"#.utf8) + [0])
        let flood = try (0..<100).map { _ in try RawSocket(path: daemon.socketPath) }
        #expect(daemon.waitForLog(containing: "out of file descriptors"), "\(daemon.daemonLog)")
        // Served while the flood stays open: orchd closes its idle connections to make room.
        #expect(try daemon.orchctl(["ping"]).status == 0, "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("longest idle"), "\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
        let reply = waiting.readMessages(untilClosed: false, timeout: 30).messages
        #expect(reply.first?.contains("\"result\":\"cancelled\"") == true, "the Wait in progress kept its connection: \(reply)")
        withExtendedLifetime(flood) {}
    }

    @Test("jobs submitted while orchd is out of file descriptors are not failed: each starts once orchd has descriptors again")
    func launchesWaitForDescriptors() throws {
        let daemon = try TestDaemon(launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let flood = try (0..<200).map { _ in try RawSocket(path: daemon.socketPath) }
        #expect(daemon.waitForLog(containing: "out of file descriptors"), "\(daemon.daemonLog)")
        let ids = try (1...5).map { try daemon.orchctl(["submit", "--", "echo", "job \($0)"]).line }
        let waited = try daemon.orchctl(["wait", "--timeout", "60s"] + ids)
        #expect(waited.status == 0, "\(waited) \(daemon.daemonLog)")
        for id in ids {
            let shown = try daemon.orchctl(["show", id])
            #expect(shown.standardOutput.contains("succeeded"), "\(shown)")
        }
        withExtendedLifetime(flood) {}
    }

    @Test("idle connections opened one at a time, none left waiting to be accepted, never hold the descriptors a launch needs")
    func launchesGetDescriptorsFromIdleConnections() throws {
        let daemon = try TestDaemon(launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let pid = try #require(daemon.process?.processIdentifier)
        // Each served a Ping before the next opens, so no accept ever fails (that alone used
        // to close idle connections), until orchd has 4 descriptors left or 100 are open.
        let ping = Array(#"{"method":"io.orchd.Manager.Ping","parameters":{}}"#.utf8) + [0]
        var idle: [RawSocket] = []
        while try openDescriptors(of: pid) < 60, idle.count < 100 {
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send(ping)
            _ = socket.readMessages(untilClosed: false, timeout: 30)
            idle.append(socket)
        }
        let id = try daemon.orchctl(["submit", "--", "echo", "ran"]).line
        let waited = try daemon.orchctl(["wait", "--timeout", "60s", id])
        #expect(waited.status == 0, "\(waited) \(daemon.daemonLog)")
        #expect(try daemon.orchctl(["logs", id]).standardOutput == "ran\n")
        withExtendedLifetime(idle) {}
    }

    @Test("busy connections cannot take the descriptors orchd keeps for jobs: past them a client is refused, orchctl tries again for a while and then gives a clear error (exit 69), and jobs still start")
    func busyConnectionsLeaveTheReserve() throws {
        let daemon = try TestDaemon(launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let release = daemon.directory + "/release"
        let blocker = try daemon.orchctl(["submit", "--", "sh", "-c", "while [ ! -e '\(release)' ]; do sleep 0.05; done"]).line
        // Each a Wait in progress: never closed for idleness.
        var waits: [RawSocket] = []
        var refused: String?
        while refused == nil, waits.count < 100 {
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send(Array(#"{"method":"io.orchd.Jobs.Wait","parameters":{"ids":[\#(blocker)]}}"#.utf8) + [0])
            waits.append(socket)
            // The Waits get no answer before the blocker ends: any connection with something to
            // read was refused, the new one or (on a loaded machine, later) an earlier one.
            _ = socket.waitReadable(timeout: 0.2)
            refused = waits.first { $0.waitReadable(timeout: 0) }.flatMap { $0.readMessages(untilClosed: false, timeout: 5).messages.first }
        }
        let refusal = try #require(refused, "a connection was refused before 100")
        #expect(refusal.contains("io.orchd.Manager.TooManyConnections") && refusal.contains("short of file descriptors"), "\(refusal)")
        let pid = try #require(daemon.process?.processIdentifier)
        #expect(try openDescriptors(of: pid) < 64, "some descriptors are still free")
        // orchctl makes a refused call again for a while (10 s), then gives orchd's reason.
        let submitted = try daemon.orchctl(["submit", "--", "echo", "ran"])
        #expect(submitted.status == 69 && submitted.standardError.contains("short of file descriptors"), "\(submitted)")
        #expect(submitted.standardError.contains("refused by orchd") && submitted.standardError.contains("trying again for up to 10s"), "\(submitted)")
        // One refused now gets in once there is room: when the Waits are answered and their clients leave.
        let retried = try OrchctlStream(daemon, ["submit", "--", "echo", "ran"])
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        for socket in waits { _ = socket.readMessages(untilClosed: false, timeout: 30) }
        waits.removeAll()
        let retriedID = retried.nextLine(timeout: 30)
        #expect(retried.exitStatus() == 0 && retriedID != nil, "the submit made again got in: \(retriedID ?? "nothing")")
        let id = try daemon.orchctl(["submit", "--", "echo", "ran"]).line
        let waited = try daemon.orchctl(["wait", "--timeout", "60s", id] + (retriedID.map { [$0] } ?? []))
        #expect(waited.status == 0, "\(waited) \(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("refusing connections"), "\(daemon.daemonLog)")
        withExtendedLifetime(waits) {}
    }

    @Test("clients waiting on their own jobs cannot take the descriptors those jobs need to start: 120 submit --wait at once under a limit of 64 all end, each stored job run once")
    func waitingClientsLeaveRoomForTheirJobs() throws {
        let daemon = try TestDaemon(arguments: ["--concurrency", "40"], launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let marks = daemon.directory + "/marks"
        #expect(mkdir(marks, 0o755) == 0)
        // Each client is made again for 10 s when refused, then exits 69; one that got in
        // waits for its job, which must get the descriptors to start.
        let script = """
            for i in $(seq 120); do
                ( timeout -s KILL 90 "$0" --socket "$1" submit --wait -- sh -c "echo x >> '\(marks)'/\\$ORCHD_JOB_ID; sleep 1" >/dev/null 2>&1
                  echo $? > "$2/rc.$i" ) &
            done
            wait
            """
        let clients = try TestDaemon.run("/bin/bash", ["-c", script, Binaries.orchctl, daemon.socketPath, daemon.directory])
        #expect(clients.status == 0, "\(clients)")
        let codes = try (1...120).map { try String(contentsOfFile: daemon.directory + "/rc.\($0)", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(codes.allSatisfy { $0 == "0" || $0 == "69" }, "each client got in and saw its job end, or was refused: \(Dictionary(grouping: codes, by: { $0 }).mapValues(\.count)) \(daemon.daemonLog)")
        // Every job stored ran to its end, once.
        let status = try daemon.orchctl(["status", "--all", "--json"])
        let jobs = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [[String: Any]], "\(status)")
        #expect(jobs.allSatisfy { $0["result"] as? String == "succeeded" }, "\(jobs.filter { $0["result"] as? String != "succeeded" }.count) not succeeded")
        let runs = try FileManager.default.contentsOfDirectory(atPath: marks).map { try String(contentsOfFile: marks + "/" + $0, encoding: .utf8) }
        #expect(runs.count == jobs.count && runs.allSatisfy { $0 == "x\n" }, "\(runs.count) jobs ran, \(jobs.count) stored")
        #expect(codes.filter { $0 == "0" }.count == jobs.count)
    }

    @Test("followed logs cannot take the descriptors orchd keeps for jobs: past them a follow is refused as orchd short of descriptors (exit 69), not as a storage failure")
    func logFollowsLeaveTheReserve() throws {
        let daemon = try TestDaemon(launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let pid = try #require(daemon.process?.processIdentifier)
        let release = daemon.directory + "/release"
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "echo first; while [ ! -e '\(release)' ]; do sleep 0.05; done"]).line
        // Each follow holds its connection, the log file and an inotify descriptor.
        var follows: [OrchctlStream] = []
        defer { for follow in follows { follow.stop() } }
        var refusal: (line: String?, status: Int32)?
        while refusal == nil, follows.count < 40 {
            let follow = try OrchctlStream(daemon, ["logs", "-f", id], captureErrors: true)
            follows.append(follow)
            if follow.nextLine() != "first" { refusal = (follow.nextErrorLine(), follow.exitStatus()) }
        }
        let refused = try #require(refusal, "a follow was refused before 40")
        #expect(refused.status == 69 && refused.line?.contains("short of file descriptors") == true, "\(refused)")
        #expect(try openDescriptors(of: pid) < 64, "some descriptors are still free")
        let submitted = try daemon.orchctl(["submit", "--", "true"])
        #expect(submitted.status == 0, "\(submitted)")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        #expect(try daemon.orchctl(["wait", "--timeout", "60s", id, submitted.line]).status == 0)
    }

    @Test("in a burst of launches short of descriptors, hooks that cannot start are tried again and a launch sent back starts nothing: every job has one started event, one started hook and one finished hook")
    func hooksWaitForDescriptors() throws {
        let daemon = try TestDaemon(launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let log = daemon.directory + "/hooks"
        let added = try daemon.orchctl([
            "queue", "add", "h", "--concurrency", "60",
            "--on", "started=echo S $ORCHD_JOB_ID >> '\(log)'", "--on", "finished=echo F $ORCHD_JOB_ID >> '\(log)'",
        ])
        try #require(added.status == 0, "\(added)")
        // Sixty at once, each holding its descriptors for a while: launches and hooks run short.
        let batch = (0..<60).map { _ in "sleep 1" }.joined(separator: "\n")
        #expect(try daemon.orchctl(["submit", "--queue", "h", "--batch", "-"], input: batch).status == 0)
        // While sixty launch, orchd may be at the last descriptors it keeps for jobs and refuse
        // a client (exit 69, "short of file descriptors"): it is asked again.
        let deadline = Date().addingTimeInterval(90)
        var drained = try daemon.orchctl(["wait", "--queue", "h", "--drained", "--timeout", "120s"])
        while drained.status == 69, drained.standardError.contains("short of file descriptors"), Date() < deadline {
            drained = try daemon.orchctl(["wait", "--queue", "h", "--drained", "--timeout", "120s"])
        }
        #expect(drained.status == 0, "\(drained)")
        // Hooks run after the events they follow; retried ones up to a minute later.
        func lines(_ kind: String) -> [Substring] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix(kind) }
        }
        while lines("F ").count < 60 || Set(lines("S ")).count < 60, Date() < deadline { usleep(50_000) }
        #expect(lines("F ").count == 60 && Set(lines("F ")).count == 60, "\(lines("F "))")
        #expect(Set(lines("S ")).count == 60, "every job's started hook ran: \(Set(lines("S ")).count) \(daemon.daemonLog)")
        // A launch sent back to its queue for want of descriptors had started nothing: no
        // `started` event and no hook for it, only for the start that followed.
        let events = try daemon.orchctl(["events", "--queue", "h"])
        let kinds = events.standardOutput.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /"kind":"([a-z_]+)"/).map { String($0.output.1) }
        }
        #expect(kinds.filter { $0 == "started" }.count == 60 && !kinds.contains("requeued"), "\(kinds)")
        #expect(lines("S ").count == 60, "one started hook per job: \(lines("S ").count) \(daemon.daemonLog)")
    }

    /// How many file descriptors process `pid` has open.
    private func openDescriptors(of pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    @Test("with every file descriptor in use, a cancel still tears its job down and gets its reply",
          arguments: ["process-group", "cgroup"])
    func cancelWithoutDescriptors(containment: String) throws {
        let daemon = try TestDaemon(
            arguments: ["--containment", containment, "--kill-grace", "2s"], launcher: ["/usr/bin/prlimit", "--nofile=64", "--"])
        let started = try ReadyMarker(path: daemon.directory + "/started")
        let id = try daemon.orchctl(["submit", "--", "sh", "-c", "sleep 300 & echo $! > '\(started.path)'; wait"]).line
        let background = try #require(Int32(started.read()?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
        let control = try RawSocket(path: daemon.socketPath)
        do {
            // orchd's descriptors all used up: it can read neither /proc nor cgroup files now.
            let flood = try (0..<100).map { _ in try RawSocket(path: daemon.socketPath) }
            #expect(daemon.waitForLog(containing: "out of file descriptors"), "\(daemon.daemonLog)")
            control.send(Array(#"{"method":"io.orchd.Jobs.Cancel","parameters":{"ids":[\#(id)]}}"#.utf8) + [0])
            let reply = control.readMessages(untilClosed: false, timeout: 30).messages
            #expect(reply.first?.contains("\"result\":\"cancelled\"") == true, "\(reply) \(daemon.daemonLog)")
            // Gone, or a zombie until orchd (its subreaper) can read /proc again and reap it.
            let state = (try? String(contentsOfFile: "/proc/\(background)/stat", encoding: .utf8))?
                .split(separator: ")").last?.split(separator: " ").first
            #expect(state == nil || state == "Z", "the job's background process was torn down (state \(state ?? "gone"))")
            withExtendedLifetime(flood) {}
        }
        #expect(try daemon.orchctl(["ping"]).status == 0, "\(daemon.daemonLog)")
    }

    @Test("a client that vanishes mid-call does not disturb the daemon")
    func vanishingClient() throws {
        let daemon = try TestDaemon()
        let id = try daemon.orchctl(["submit", "--", "sleep", "30"]).line
        do {
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send(Array(#"{"method":"io.orchd.Jobs.Wait","parameters":{"ids":[\#(id)]}}"#.utf8) + [0])
        }
        #expect(try daemon.orchctl(["cancel", id]).status == 0)
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    @Test("clients that never read their replies do not stall the scheduler or other clients")
    func nonReadingClients() throws {
        let daemon = try TestDaemon()
        // A backlog of events larger than a socket buffer.
        let batch = (0..<400).map { _ in "true" }.joined(separator: "\n")
        #expect(try daemon.orchctl(["submit", "--batch", "-"], input: batch).status == 0)
        #expect(try daemon.orchctl(["wait", "--all"]).status == 0)
        var sockets: [RawSocket] = []
        for _ in 0..<100 {
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send(Array(#"{"method":"io.orchd.Jobs.Subscribe","parameters":{"follow":true},"more":true}"#.utf8) + [0])
            sockets.append(socket)
        }
        // Served while those hundred streams sit unread: a stall would hit the --timeout.
        let id = try daemon.orchctl(["submit", "--", "true"]).line
        let waited = try daemon.orchctl(["wait", id, "--timeout", "30s"])
        #expect(waited.status == 0, "\(waited)")
        #expect(try daemon.orchctl(["status", id]).status == 0)
        withExtendedLifetime(sockets) {}
    }

    @Test("thousands of short connections from several clients at once, while jobs start and end, leave orchd serving")
    func connectionChurn() throws {
        let daemon = try TestDaemon()
        // Jobs ending meanwhile add pidfd watches to the churn of connection watches.
        let batch = (0..<300).map { _ in "true" }.joined(separator: "\n")
        #expect(try daemon.orchctl(["submit", "--batch", "-"], input: batch).status == 0)
        let ping = Array(#"{"method":"io.orchd.Manager.Ping","parameters":{}}"#.utf8) + [0]
        let answered = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        let socketPath = daemon.socketPath
        DispatchQueue.concurrentPerform(iterations: 4) { client in
            for round in 0..<3_000 {
                guard let socket = try? RawSocket(path: socketPath) else {
                    refused.add(1, ordering: .relaxed)
                    continue
                }
                socket.send(ping)
                // Every fourth client leaves without reading its reply.
                if (round + client) % 4 != 0, socket.readMessages(untilClosed: false).messages.first?.contains("error") == false {
                    answered.add(1, ordering: .relaxed)
                }
            }
        }
        let (replies, refusals) = (answered.load(ordering: .relaxed), refused.load(ordering: .relaxed))
        #expect(refusals == 0)
        #expect(replies == 9_000, "every client that read got its reply")
        #expect(daemon.process?.isRunning == true, "\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["wait", "--all"]).status == 0, "\(daemon.daemonLog)")
        #expect(try daemon.orchctl(["ping"]).status == 0)
    }

    /// Sends each call in turn on `socket` and collects the replies, one call at a time.
    static func replies(to calls: [String], on socket: RawSocket) -> [String] {
        var replies: [String] = []
        for call in calls {
            socket.send(Array(call.utf8) + [0])
            replies += socket.readMessages(untilClosed: false).messages
        }
        return replies
    }
}
