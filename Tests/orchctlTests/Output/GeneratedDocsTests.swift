import CommandLineParsing
import Foundation
import OrchestratorAPI
import Testing
@testable import orchctl

/// The manual page and the completion scripts are written from the command table: every
/// command and option help shows is in them, and `man/orchctl.1` is the generated text.
@Suite("Generated manual page and completions")
struct GeneratedDocsTests {
    static var repository: URL {
        URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    static var page: String { ManPage(commands: CommandTable.specs, version: "0.0.0-test").render() }

    @Test("man/orchctl.1 is what 'orchctl manual' writes (regenerate: .build/debug/orchctl manual > man/orchctl.1)")
    func manualInStep() throws {
        let file = try String(contentsOf: Self.repository.appending(path: "man/orchctl.1"), encoding: .utf8)
        let current = ManPage(commands: CommandTable.specs, version: OrchdVersion.string).render()
        #expect(file == current)
    }

    @Test("every command and option of 'orchctl help' is in the manual page")
    func manualCoversTable() {
        let page = Self.page
        for command in CommandTable.allSpecs {
            #expect(page.contains(".SS \"\(Roff.escape(command.name))\"\n"), "\(command.name)")
            for option in command.options {
                #expect(page.contains("\\fB\\-\\-\(Roff.escape(option.name))\\fR"), "\(command.name) --\(option.name)")
            }
        }
        // The root help lists the same top-level commands.
        let rootHelp = Orchctl.helpRenderer.rootHelp()
        for command in CommandTable.specs {
            #expect(rootHelp.contains("  \(command.name) "))
        }
        #expect(!page.split(separator: "\n").contains { $0.hasPrefix(".") && $0.hasPrefix(".\\\"") == false && $0.count > 1 && $0.dropFirst().first == " " })
    }

    @Test("each completion script names every command, subcommand and option", arguments: CompletionScript.Shell.allCases)
    func completionCoversTable(shell: CompletionScript.Shell) {
        let script = CompletionScript(commands: CommandTable.specs).script(for: shell)
        for command in CommandTable.allSpecs {
            #expect(script.contains(command.word), "\(shell): \(command.name)")
            for option in command.options + GlobalOptions.specs {
                #expect(script.contains("--\(option.name)") || script.contains("-l \(option.name)"), "\(shell): \(command.name) --\(option.name)")
            }
            if case .choice(let words)? = command.options.first(where: { if case .choice = $0.kind { true } else { false } })?.kind {
                for word in words { #expect(script.contains(word), "\(shell): \(word)") }
            }
        }
    }

    @Test("the bash script is valid bash and registers the completion", arguments: ["bash -n", "source"])
    func bashSyntax(mode: String) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "orchctl-completion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "orchctl.bash")
        try CompletionScript(commands: CommandTable.specs).script(for: .bash).write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(filePath: "/bin/bash")
        process.arguments = mode == "bash -n" ? ["-n", file.path] : ["-c", "source '\(file.path)' && complete -p orchctl"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Killed if still running after a minute: a script that loops fails instead of hanging.
        let limit = DispatchWorkItem { [pid = process.processIdentifier] in kill(pid, SIGKILL) }
        DispatchQueue(label: "test.bash-limit").asyncAfter(deadline: .now() + 600, execute: limit)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        limit.cancel()
        #expect(process.terminationStatus == 0, "\(text)")
        if mode == "source" { #expect(text == "complete -F _orchctl orchctl\n") }
    }

    @Test("roff escaping: hyphens, backslashes and a leading dot")
    func escaping() {
        #expect(Roff.escape("--queue a\\b") == "\\-\\-queue a\\eb")
        #expect(Roff.escape(".hidden") == "\\&.hidden")
        #expect(Roff.escape("'quoted'") == "\\&'quoted'")
    }
}
