import Testing
@testable import orchctl

@Suite("orchctl runs")
struct OrchctlTests {
    @Test("status with no daemon exits 69 and says how to start it")
    func noDaemon() {
        let capture = CapturedConsole()
        let status = Orchctl.run(["--socket", "/nonexistent/orchd.sock", "status"], context: testContext(capture))
        #expect(status == .unavailable)
        #expect(capture.standardOutput.isEmpty)
        #expect(capture.standardError == "Error: cannot reach orchd at /nonexistent/orchd.sock (No such file or directory). Is it running? Start one that serves it in another terminal: orchd --socket /nonexistent/orchd.sock (with --state-dir DIR of its own when another orchd uses the default state directory)\n")
    }

    @Test("a usage error quotes what was typed with its control characters made visible")
    func usageErrorControlCharacters() {
        let capture = CapturedConsole()
        let status = Orchctl.run(["--socket", "/tmp/x", "queue", "add", "a\nb\u{1B}[31m"], context: testContext(capture))
        #expect(status == .usage)
        #expect(capture.standardError.hasPrefix("Error: invalid value for argument '<queue>': 'a\\nb\\u{1B}[31m' is not a valid queue name"))
        #expect(!capture.standardError.contains("\u{1B}"))
    }

    @Test("submit without a command exits 64 with usage and a help hint")
    func submitWithoutCommand() {
        let capture = CapturedConsole()
        let status = Orchctl.run(["--socket", "/tmp/x", "submit"], context: testContext(capture))
        #expect(status == .usage)
        #expect(capture.standardError == """
            Error: no command to run: give --shell <string>, -- <argv> ... or --batch <file>
            Usage: orchctl submit [<options>] (--shell <string> | -- <argv> ... | --batch <file>)
            See 'orchctl submit --help'.

            """)
    }

    @Test("a usage error exits 64 and names the option")
    func usageError() {
        let capture = CapturedConsole()
        #expect(Orchctl.run(["status", "--bogus"], context: testContext(capture)) == .usage)
        #expect(capture.standardError.hasPrefix("Error: unknown option '--bogus'\nUsage: orchctl status"))
        #expect(capture.standardError.hasSuffix("See 'orchctl status --help'.\n"))
    }

    @Test("--version prints the version")
    func version() {
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--version"], context: testContext(capture)) == .success)
        #expect(capture.standardOutput.hasPrefix("orchctl "))
    }
}
