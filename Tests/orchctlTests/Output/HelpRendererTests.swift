import CommandLineParsing
import FoundationEssentials
import Testing
@testable import orchctl

@Suite("Help text")
struct HelpRendererTests {
    @Test("every command's help has OVERVIEW, USAGE and OPTIONS, and lists each of its options",
          arguments: CommandTable.allSpecs.map(\.name))
    func everyCommand(name: String) throws {
        let spec = try #require(CommandTable.command(named: name)).spec
        let text = Orchctl.helpRenderer.help(for: spec)
        #expect(text.hasPrefix("OVERVIEW: \(spec.abstract)\n"))
        #expect(text.contains("\nUSAGE: orchctl \(name)"))
        #expect(text.contains("\nOPTIONS:\n"))
        #expect(text.contains("  -h, --help"))
        #expect(text.contains("  --socket <path>"))
        for option in spec.options { #expect(text.contains("  " + option.label)) }
        if !spec.arguments.isEmpty { #expect(text.contains("\nARGUMENTS:\n")) }
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    @Test("abstracts and option help are sentences ending with a period")
    func sentences() {
        for spec in CommandTable.allSpecs {
            #expect(spec.abstract.first?.isUppercase == true && spec.abstract.hasSuffix("."), "\(spec.name)")
            for option in spec.options + GlobalOptions.specs {
                #expect(option.help.hasSuffix(".") || option.help.hasSuffix(")"), "\(spec.name) --\(option.name)")
            }
        }
    }

    @Test("the top-level help lists every command under SUBCOMMANDS")
    func rootHelp() {
        let text = Orchctl.helpRenderer.rootHelp()
        #expect(text.hasPrefix("OVERVIEW: "))
        #expect(text.contains("\nUSAGE: orchctl [--socket <path>] [--json] <subcommand>\n"))
        #expect(text.contains("\nSUBCOMMANDS:\n"))
        for spec in CommandTable.specs { #expect(text.contains("  \(spec.name) ")) }
    }

    @Test("a group's help lists its subcommands; the top level lists the group, not its subcommands")
    func groupHelp() throws {
        let text = Orchctl.helpRenderer.help(for: try #require(CommandTable.command(named: "queue")).spec)
        #expect(text.contains("\nSUBCOMMANDS:\n  add  "))
        #expect(text.contains("\n  set  ") && text.contains("\n  remove  "))
        #expect(text.contains("See 'orchctl help queue <subcommand>' for detailed help."))
        let root = Orchctl.helpRenderer.rootHelp()
        #expect(root.contains("\n  queue  "))
        #expect(!root.contains("queue set"))
        for name in ["queues", "pause", "resume", "retry", "prune"] { #expect(root.contains("\n  \(name) ")) }
    }

    @Test("'orchctl help queue set' prints exactly what 'orchctl queue set --help' prints")
    func subcommandHelpEqualsFlag() {
        let viaCommand = CapturedConsole()
        let viaFlag = CapturedConsole()
        #expect(Orchctl.run(["help", "queue", "set"], context: testContext(viaCommand)) == .success)
        #expect(Orchctl.run(["queue", "set", "--help"], context: testContext(viaFlag)) == .success)
        #expect(viaCommand.standardOutput == viaFlag.standardOutput)
        #expect(viaCommand.standardOutput.hasPrefix("OVERVIEW: Change a queue's concurrency, retry backoff, hooks and executor.\n"))
        #expect(viaCommand.standardOutput.contains("\nUSAGE: orchctl queue set <queue> [<options>]\n"))
    }

    @Test("'orchctl help submit' prints exactly what 'orchctl submit --help' prints")
    func helpCommandEqualsFlag() {
        let viaCommand = CapturedConsole()
        let viaFlag = CapturedConsole()
        #expect(Orchctl.run(["help", "submit"], context: testContext(viaCommand)) == .success)
        #expect(Orchctl.run(["submit", "--help"], context: testContext(viaFlag)) == .success)
        #expect(viaCommand.standardOutput == viaFlag.standardOutput)
        #expect(!viaCommand.standardOutput.isEmpty)
    }

    /// The golden help files, by the arguments that print them. Regenerate one deliberately
    /// with e.g. `.build/debug/orchctl events --help > Tests/orchctlTests/Golden/events-help.txt`
    /// and review the diff.
    static let goldenFiles: [(arguments: [String], file: String)] = [
        (["--help"], "orchctl-help.txt"),
        (["submit", "--help"], "submit-help.txt"),
        (["wait", "--help"], "wait-help.txt"),
        (["events", "--help"], "events-help.txt"),
        (["logs", "--help"], "logs-help.txt"),
        (["queue", "set", "--help"], "queue-set-help.txt"),
        (["queue", "add", "--help"], "queue-add-help.txt"),
        (["queue", "remove", "--help"], "queue-remove-help.txt"),
        (["cancel", "--help"], "cancel-help.txt"),
        (["retry", "--help"], "retry-help.txt"),
        (["hold", "--help"], "hold-help.txt"),
        (["release", "--help"], "release-help.txt"),
        (["edit", "--help"], "edit-help.txt"),
        (["suspend", "--help"], "suspend-help.txt"),
        (["continue", "--help"], "continue-help.txt"),
    ]

    @Test("help matches its golden file", arguments: goldenFiles)
    func golden(arguments: [String], file: String) throws {
        let golden = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Golden/\(file)")
        let expected = String(decoding: try Data(contentsOf: golden), as: UTF8.self)
        let capture = CapturedConsole()
        #expect(Orchctl.run(arguments, context: testContext(capture)) == .success)
        #expect(capture.standardOutput == expected)
    }
}
