import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("Argument parser")
struct ArgumentParserTests {
    @Test("global options are accepted before the command")
    func globalBefore() throws {
        let parsed = try invocation(["--socket", "/tmp/s.sock", "--json", "show", "7"])
        #expect(parsed.command.name == "show")
        #expect(parsed.global.socket == "/tmp/s.sock")
        #expect(parsed.global.json)
        #expect(parsed.arguments == ["7"])
    }

    @Test("global options are accepted after the command and its arguments")
    func globalAfter() throws {
        let parsed = try invocation(["show", "7", "--json", "--socket=/tmp/s.sock"])
        #expect(parsed.global.json)
        #expect(parsed.global.socket == "/tmp/s.sock")
        #expect(parsed.arguments == ["7"])
    }

    @Test("'--' passes the job's argv verbatim, including words that look like options")
    func doubleDash() throws {
        let parsed = try invocation(["submit", "--queue", "build", "--", "make", "-j4", "--json", "--help", "--", "x"])
        #expect(parsed.trailing == ["make", "-j4", "--json", "--help", "--", "x"])
        #expect(parsed.global.json == false)
        #expect(parsed.value("queue") == "build")
    }

    @Test("--opt=value and --opt value are the same")
    func equalsForm() throws {
        let spaced = try invocation(["submit", "--priority", "5", "--name", "a=b", "--", "true"])
        let joined = try invocation(["submit", "--priority=5", "--name=a=b", "--", "true"])
        #expect(spaced.values == joined.values)
        #expect(joined.integer("priority") == 5)
        #expect(joined.value("name") == "a=b")
    }

    @Test("a negative number is a value, not an option")
    func negativePriority() throws {
        let parsed = try invocation(["submit", "--priority", "-3", "--", "true"])
        #expect(parsed.integer("priority") == -3)
    }

    @Test("repeatable options accumulate and later keys win")
    func repeatable() throws {
        let parsed = try invocation(["submit", "--env", "A=1", "--env", "B=2", "--env", "A=3", "--label", "k=v", "--", "env"])
        #expect(parsed.keyValues("env") == ["A": "3", "B": "2"])
        #expect(parsed.keyValues("label") == ["k": "v"])
    }

    @Test("an unknown option is a usage error naming it")
    func unknownOption() {
        let error = parseError(["status", "--bogus"])
        #expect(error?.code == .unknownOption)
        #expect(error?.message == "unknown option '--bogus'")
        #expect(error?.command == "status")
        #expect(parseError(["status", "--bogus=1"])?.message == "unknown option '--bogus'")
        #expect(parseError(["status", "-x"])?.message == "unknown option '-x'")
    }

    @Test("a command's option before the command word is unknown at the top level")
    func commandOptionBeforeCommand() {
        let error = parseError(["--queue", "q", "status"])
        #expect(error?.code == .unknownOption)
        #expect(error?.command == nil)
    }

    @Test("an option missing its value is a usage error")
    func missingValue() {
        let last = parseError(["status", "--queue"])
        #expect(last?.code == .missingValue)
        #expect(last?.message == "missing value for option '--queue <queue>'")
        #expect(parseError(["submit", "--queue", "--wait", "--", "true"])?.code == .missingValue)
    }

    @Test("a flag given a value is a usage error")
    func flagWithValue() {
        #expect(parseError(["submit", "--wait=yes", "--", "true"])?.code == .unexpectedValue)
    }

    @Test("a bad integer is a usage error")
    func badInteger() {
        let error = parseError(["submit", "--priority", "high", "--", "true"])
        #expect(error?.code == .invalidValue)
        #expect(error?.message == "invalid value for option '--priority': 'high' is not an integer")
    }

    @Test("job IDs must be positive integers")
    func badJobID() {
        #expect(parseError(["show", "abc"])?.message == "invalid value for argument '<id>': 'abc' is not a job ID (a positive integer)")
        #expect(parseError(["cancel", "1", "0"])?.code == .invalidValue)
    }

    @Test("queue names, states, KEY=VALUE and time spans are checked")
    func valueKinds() {
        #expect(parseError(["status", "--queue", "-bad"])?.code == .missingValue)
        #expect(parseError(["status", "--queue=.bad"])?.code == .invalidValue)
        #expect(parseError(["status", "--state", "sleeping"])?.code == .invalidValue)
        #expect(parseError(["submit", "--env", "NOEQUALS", "--", "true"])?.code == .invalidValue)
        #expect(parseError(["submit", "--label", "=v", "--", "true"])?.code == .invalidValue)
        #expect(parseError(["wait", "1", "--timeout", "soon"])?.code == .invalidValue)
    }

    @Test("an unknown command is a usage error at the top level")
    func unknownCommand() {
        let error = parseError(["frobnicate"])
        #expect(error?.code == .unknownCommand)
        #expect(error?.message == "unknown command 'frobnicate'")
        #expect(error?.command == nil)
        #expect(parseError([])?.code == .missingCommand)
    }

    @Test("missing and extra arguments are usage errors")
    func arity() {
        #expect(parseError(["show"])?.code == .missingArgument)
        #expect(parseError(["show", "1", "2"])?.code == .unexpectedArgument)
        #expect(parseError(["ping", "now"])?.code == .unexpectedArgument)
        #expect(parseError(["wait"])?.code == .missingArgument)
    }

    @Test("a job command without '--' is refused with a hint")
    func submitNeedsDoubleDash() {
        let error = parseError(["submit", "make", "-j4"])
        #expect(error?.code == .unexpectedArgument)
        #expect(error?.message == "unexpected argument 'make'; put the job's command after '--' (orchctl submit -- make ...)")
    }

    @Test("'help submit' is 'submit --help', and -h is --help")
    func helpForms() throws {
        let spec = try #require(CommandTable.command(named: "submit")).spec
        #expect(try parse(["help", "submit"]) == .help(spec))
        #expect(try parse(["submit", "--help"]) == .help(spec))
        #expect(try parse(["submit", "-h"]) == .help(spec))
        #expect(try parse(["--help", "submit"]) == .help(spec))
        #expect(try parse(["help"]) == .help(nil))
        #expect(try parse(["--help"]) == .help(nil))
        #expect(parseError(["help", "frob"])?.code == .unknownCommand)
    }

    @Test("--version is accepted alone and after a command")
    func version() throws {
        #expect(try parse(["--version"]) == .version)
        #expect(try parse(["status", "--version"]) == .version)
    }

    @Test("'--' after a command without trailing arguments ends options")
    func doubleDashPositional() throws {
        let parsed = try invocation(["cancel", "--", "5"])
        #expect(parsed.jobIDs == [JobID(rawValue: 5)])
    }
}
