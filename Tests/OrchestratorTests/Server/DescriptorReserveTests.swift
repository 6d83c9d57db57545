import Testing

@testable import Orchestrator

@Suite("The descriptor reserve connections stay out of")
struct DescriptorReserveTests {
    @Test("an accepted descriptor's distance from the limit places it: 32 left and more outside, then closing idle connections, then making room or pausing, and refused in the last two launches' worth and a margin")
    func bands() throws {
        let limit = try #require(DescriptorRelief.softLimit())
        // `left` descriptors above the accepted one.
        func use(left: Int) -> VarlinkServer.ReserveUse { VarlinkServer.descriptorReserve(below: Int32(limit - 1 - left)) }
        #expect(use(left: 32) == .outside)
        #expect(use(left: 31) == .entered && use(left: 26) == .entered)
        #expect(use(left: 25) == .deep && use(left: 20) == .deep)
        #expect(use(left: 19) == .critical && use(left: 0) == .critical)
        // Launches keep one launch's worth back and need a second: connections leave both.
        #expect(VarlinkServer.refusingDescriptors >= 2 * LocalExecutor.descriptorsPerLaunch)
    }
}
