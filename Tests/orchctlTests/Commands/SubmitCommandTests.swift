import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("submit's job spec")
struct SubmitCommandTests {
    let console = CapturedConsole()

    func spec(_ arguments: [String], environment: [String: String] = ["PATH": "/bin", "NOTIFY_SOCKET": "/run/x"]) throws -> JobSpec {
        try SubmitCommand.makeSpec(try invocation(arguments), context: testContext(console, environment: environment))
    }

    @Test("the spec captures argv, the caller's environment with overrides, and its directory")
    func capturesCallerContext() throws {
        let built = try spec(["submit", "--env", "FOO=bar", "--env", "PATH=/opt/bin", "--queue", "build",
                              "--priority", "3", "--name", "nightly", "--label", "team=infra", "--", "make", "-j4"])
        #expect(built.command == .argv(["make", "-j4"]))
        #expect(built.environment == ["PATH": "/opt/bin", "FOO": "bar"])
        #expect(built.cwd == "/tmp")
        #expect(built.queue.rawValue == "build")
        #expect(built.priority == 3)
        #expect(built.name == "nightly")
        #expect(built.labels == ["team": "infra"])
    }

    @Test("--shell runs a string; giving both forms is refused")
    func shell() throws {
        #expect(try spec(["submit", "--shell", "echo $HOME"]).command == .shell("echo $HOME"))
        #expect(throws: CommandLineError.self) { try spec(["submit", "--shell", "ls", "--", "ls"]) }
    }

    @Test("--cwd is made absolute and must be a directory")
    func workingDirectory() throws {
        #expect(try spec(["submit", "--cwd", "/", "--", "ls"]).cwd == "/")
        #expect(try spec(["submit", "--cwd", ".", "--", "ls"]).cwd == "/tmp")
        #expect(try spec(["submit", "--cwd", "../usr//bin/.", "--", "ls"]).cwd == "/usr/bin")
        #expect(SubmitCommand.normalized("/a/b/../../..") == "/")
        let error = #expect(throws: CommandLineError.self) { try spec(["submit", "--cwd", "/nonexistent-dir", "--", "ls"]) }
        #expect(error?.message == "invalid value for option '--cwd': /nonexistent-dir: No such file or directory")
        #expect(throws: CommandLineError.self) { try spec(["submit", "--cwd", "/etc/passwd", "--", "ls"]) }
    }

    @Test("an empty command is refused")
    func empty() {
        #expect(throws: CommandLineError.self) { try spec(["submit", "--"]) }
        #expect(throws: CommandLineError.self) { try spec(["submit", "--shell", ""]) }
    }
}
