import Synchronization
import Testing
@testable import Orchestrator

@Suite("Descriptor relief")
struct DescriptorReliefTests {
    @Test("an ask runs the handler once set, and not again within the minimum interval")
    func asksAreSpacedAndKeepErrno() {
        let relief = DescriptorRelief(minimumInterval: .seconds(3600))
        relief.ask()
        let runs = Atomic<Int>(0)
        relief.setHandler { runs.add(1, ordering: .relaxed) }
        relief.ask()
        relief.ask()
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test("without a minimum interval every ask runs the handler")
    func everyAskRunsWithoutInterval() {
        let relief = DescriptorRelief()
        let runs = Atomic<Int>(0)
        relief.setHandler { runs.add(1, ordering: .relaxed) }
        for _ in 0..<3 { relief.ask() }
        #expect(runs.load(ordering: .relaxed) == 3)
    }
}
