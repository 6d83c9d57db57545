import OrchestratorAPI
import Testing

@testable import Orchestrator

@Suite("Logs parameters")
struct LogsHandlerTests {
    @Test("offset and tailLines choose where the stream starts; negative values or both are invalid")
    func start() throws {
        let id = JobID(rawValue: 7)
        #expect(try LogsHandler.start(of: .init(id: id, stream: .stdout)) == .offset(0))
        #expect(try LogsHandler.start(of: .init(id: id, stream: .stdout, offset: Int64.max)) == .offset(Int64.max))
        #expect(try LogsHandler.start(of: .init(id: id, stream: .stdout, tailLines: 0)) == .lastLines(0))
        #expect(throws: VarlinkError.invalidParameter("offset")) {
            try LogsHandler.start(of: .init(id: id, stream: .stdout, offset: -1))
        }
        #expect(throws: VarlinkError.invalidParameter("tailLines")) {
            try LogsHandler.start(of: .init(id: id, stream: .stdout, tailLines: -1))
        }
        #expect(throws: VarlinkError.invalidParameter("tailLines")) {
            try LogsHandler.start(of: .init(id: id, stream: .stdout, offset: 3, tailLines: 2))
        }
    }
}
