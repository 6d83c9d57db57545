import Testing

@testable import Orchestrator

@Suite("Service group")
struct ServiceGroupTests {
    struct Refused: Error {}

    /// Records starts and stops in order.
    final class Trace {
        var lines: [String] = []

        func service(_ name: String, failing: Bool = false) -> ServiceGroup.Service {
            ServiceGroup.Service(
                name: name,
                start: {
                    self.lines.append("start \(name)")
                    if failing { throw Refused() }
                },
                stop: { self.lines.append("stop \(name)") })
        }
    }

    @Test("services start in order and stop in reverse, each once")
    func order() throws {
        let trace = Trace()
        let group = ServiceGroup([trace.service("a"), trace.service("b"), trace.service("c")])
        try group.start()
        group.stop()
        group.stop()
        #expect(trace.lines == ["start a", "start b", "start c", "stop c", "stop b", "stop a"])
    }

    @Test("a service that fails to start stops the ones started before it, in reverse, and names itself")
    func failure() {
        let trace = Trace()
        let group = ServiceGroup([trace.service("a"), trace.service("b"), trace.service("c", failing: true), trace.service("d")])
        #expect {
            try group.start()
        } throws: { error in
            (error as? ServiceGroup.Failure)?.service == "c"
        }
        #expect(trace.lines == ["start a", "start b", "start c", "stop b", "stop a"])
        group.stop()
        #expect(trace.lines.count == 5, "nothing left to stop")
    }
}
