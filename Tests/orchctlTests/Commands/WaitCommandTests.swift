import CommandLineParsing
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("wait command")
struct WaitCommandTests {
    @Test("wait takes job IDs, --all, or --queue Q --drained")
    func targets() throws {
        #expect(try WaitCommand.target(of: invocation(["wait", "3", "4"])) == .jobs([JobID(rawValue: 3), JobID(rawValue: 4)]))
        #expect(try WaitCommand.target(of: invocation(["wait", "--all"])) == .all)
        #expect(try WaitCommand.target(of: invocation(["wait", "--queue", "builds", "--drained"])) == .drainedQueue(QueueName(rawValue: "builds")!))
        #expect(try WaitCommand.target(of: invocation(["wait", "--drained", "--queue=builds", "--timeout", "5min"])) == .drainedQueue(QueueName(rawValue: "builds")!))
    }

    @Test("--queue without --drained, and --drained without --queue, are usage errors that say what is missing")
    func queueAndDrainedGoTogether() throws {
        let noDrained = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(["wait", "--queue", "builds"])) }
        #expect(noDrained?.message == "--queue needs --drained: 'wait --queue <queue> --drained' waits until the queue is empty")
        #expect(noDrained?.command == "wait")
        let noQueue = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(["wait", "--drained"])) }
        #expect(noQueue?.message == "--drained needs the queue to wait for: --queue <queue>")

        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", "/nonexistent", "wait", "--queue", "builds"], context: testContext(capture)) == .usage)
        #expect(capture.standardError == """
            Error: --queue needs --drained: 'wait --queue <queue> --drained' waits until the queue is empty
            Usage: orchctl wait (<id> ... | --all | --queue <queue> --drained) [--timeout <span>]
            See 'orchctl wait --help'.

            """)
    }

    @Test("IDs, --all and --queue --drained exclude each other; one of them is needed")
    func exclusive() throws {
        for arguments in [["wait", "3", "--all"], ["wait", "3", "--queue", "q", "--drained"], ["wait", "--all", "--queue", "q", "--drained"]] {
            let error = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(arguments)) }
            #expect(error?.code == .conflictingOptions, "\(arguments)")
            #expect(error?.message == "give one of job IDs, --all or --queue <queue> --drained")
        }
        let none = #expect(throws: CommandLineError.self) { try WaitCommand.target(of: invocation(["wait"])) }
        #expect(none?.code == .missingArgument)
        #expect(none?.message == "missing argument '<id>' (or --all, or --queue <queue> --drained)")
        #expect(parseError(["wait", "--queue", "bad name!", "--drained"])?.code == .invalidValue)
        #expect(parseError(["wait", "--queue", "q", "--drained=yes"])?.code == .unexpectedValue)
    }
}
