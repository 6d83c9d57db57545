import CommandLineParsing
import Foundation
import Orchestrator
import OrchestratorAPI
import Testing

/// orchd(8) is written from the option declarations `orchd --help` comes from: every option is in it, and
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

    @Test("every option orchd declares (and --version, --help) is an item of the page, with its value and help")
    func everyOption() {
        let page = DaemonManual.render()
        let options = DaemonConfiguration.command.options.filter { !$0.isHidden } + [GlobalOptions.version, GlobalOptions.help]
        #expect(options.count >= 14)
        for option in options {
            #expect(page.contains(Roff.item(option)), "--\(option.name)")
            #expect(page.contains(Roff.escape(option.help)), "--\(option.name)")
        }
        #expect(!page.contains(Roff.escape(DaemonConfiguration.testBlockControlQueueFlag)), "hidden options stay out")
    }
}
