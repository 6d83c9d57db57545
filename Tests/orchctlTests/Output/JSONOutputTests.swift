import Testing

@testable import orchctl

@Suite("JSON output")
struct JSONOutputTests {
    struct Sample: Encodable {
        var ids: [Int] = []
        var labels: [String: String] = [:]
        var name = "x"
    }

    @Test("empty arrays and objects print as [] and {}, at the top and nested")
    func emptyContainers() throws {
        #expect(try JSONOutput.text([Int]()) == "[]\n")
        let text = try JSONOutput.text([Sample()])
        #expect(text.contains("\"ids\" : [],"), "\(text)")
        #expect(text.contains("\"labels\" : {},"), "\(text)")
        #expect(!text.contains("\n\n"), "\(text)")
        #expect(try JSONOutput.text([1, 2]).contains("1,\n"))
    }
}
