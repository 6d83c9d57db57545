import OrchestratorAPI
import Testing

@Suite("Visible text")
struct VisibleTextTests {
    @Test("control characters are escaped, everything else is kept", arguments: [
        ("plain ✓ 日本語", "plain ✓ 日本語"),
        ("a\nb\tc\rd", "a\\nb\\tc\\rd"),
        ("\u{1B}[2J\u{7F}\u{85}", "\\u{1B}[2J\\u{7F}\\u{85}"),
        ("", ""),
        // Bidirectional overrides and isolates would show the rest of a line reversed.
        ("r\u{202E}evil\u{2066}x\u{2069}", "r\\u{202E}evil\\u{2066}x\\u{2069}"),
        // Marks that only set a direction, and right-to-left text itself, are kept.
        ("\u{200F}שלום", "\u{200F}שלום"),
    ])
    func visible(input: String, expected: String) {
        #expect(input.visible == expected)
    }
}
