import Foundation
import Orchestrator
import OrchestratorAPI
import Testing

/// orchd(8) is written from the text of `orchd --help`: every option is in it, and
/// `man/orchd.8` is the generated text.
@Suite("orchd manual page")
struct DaemonManualTests {
    static var file: URL {
        URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "man/orchd.8")
    }

    @Test("man/orchd.8 is the generated page (regenerate: ORCHD_WRITE_MANUALS=1 swift test --filter DaemonManualTests)")
    func inStep() throws {
        let current = DaemonManual.render()
        if ProcessInfo.processInfo.environment["ORCHD_WRITE_MANUALS"] == "1" {
            try current.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        #expect(try String(contentsOf: Self.file, encoding: .utf8) == current)
    }

    @Test("every option of orchd --help is an item of the page, with its value and help")
    func everyOption() {
        let page = DaemonManual.render()
        let options = DaemonConfiguration.usage.split(separator: "\n").compactMap { line -> Substring? in
            let body = line.drop { $0 == " " }
            guard line.count - body.count == 2, body.hasPrefix("-") else { return nil }
            return body.split(separator: " ").first { $0.hasPrefix("--") }
        }
        #expect(options.count >= 14)
        for option in options {
            let escaped = option.split(separator: "-", omittingEmptySubsequences: false).joined(separator: "\\-")
            #expect(page.contains("\\fB\(escaped)\\fR"), "\(option)")
        }
        #expect(page.contains(".TP\n\\fB\\-\\-drain\\-timeout\\fR \\fISPAN\\fR\nHow long running jobs"))
        #expect(page.contains(".TP\n\\fB\\-h,\\fR \\fB\\-\\-help\\fR\nShow this help."))
    }
}
