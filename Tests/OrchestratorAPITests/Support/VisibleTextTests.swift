import OrchestratorAPI
import Testing

@Suite("Visible text")
struct VisibleTextTests {
    @Test("control characters are escaped, everything else is kept", arguments: [
        ("plain ✓ 日本語", "plain ✓ 日本語"),
        ("a\nb\tc\rd", "a\\nb\\tc\\rd"),
        ("\u{1B}[2J\u{7F}\u{85}", "\\u{1B}[2J\\u{7F}\\u{85}"),
        ("", ""),
    ])
    func visible(input: String, expected: String) {
        #expect(input.visible == expected)
    }
}
