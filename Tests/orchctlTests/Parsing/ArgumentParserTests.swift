@testable import CommandLineParsing
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

    @Test("--json is refused, saying why, by a command whose output has no JSON form, and its help does not list it")
    func jsonWhereThereIsNone() throws {
        for words in [["top", "--once"], ["logs", "3"], ["completion", "bash"], ["manual"]] {
            let error = try #require(parseError(["--json"] + words), "\(words)")
            #expect(error.message.hasPrefix("--json: \(words[0]) "), "\(error.message)")
            let spec = try #require(CommandTable.specs.first { $0.name == words[0] })
            #expect(!HelpRenderer(commands: CommandTable.specs).help(for: spec).contains("--json"), "\(words[0])")
        }
        #expect(try invocation(["status", "--json"]).global.json)
    }

    @Test("'--' passes the job's argv verbatim, including words that look like options")
    func doubleDash() throws {
        let parsed = try invocation(["submit", "--queue", "build", "--", "make", "-j4", "--json", "--help", "--", "x"])
        #expect(parsed.trailing == ["make", "-j4", "--json", "--help", "--", "x"])
        #expect(parsed.global.json == false)
        #expect(SubmitCommand.Options(decoding: parsed).queue.rawValue == "build")
    }

    @Test("--opt=value and --opt value are the same")
    func equalsForm() throws {
        let spaced = try invocation(["submit", "--priority", "5", "--name", "a=b", "--", "true"])
        let joined = try invocation(["submit", "--priority=5", "--name=a=b", "--", "true"])
        #expect(spaced.values == joined.values)
        #expect(SubmitCommand.Options(decoding: joined).priority == 5)
        #expect(SubmitCommand.Options(decoding: joined).name == "a=b")
    }

    @Test("a negative number is a value, not an option")
    func negativePriority() throws {
        let parsed = try invocation(["submit", "--priority", "-3", "--", "true"])
        #expect(SubmitCommand.Options(decoding: parsed).priority == -3)
    }

    @Test("repeatable options accumulate and later keys win")
    func repeatable() throws {
        let parsed = try invocation(["submit", "--env", "A=1", "--env", "B=2", "--env", "A=3", "--label", "k=v", "--", "env"])
        let options = SubmitCommand.Options(decoding: parsed)
        #expect(options.environment == ["A": "3", "B": "2"])
        #expect(options.labels == ["k": "v"])
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

    @Test("a value starting with '-' reaches its own check instead of reading as a missing value", arguments: [
        (["submit", "--timeout", "-1s", "--", "true"], "invalid value for option '--timeout': '-1s' is negative; a time span cannot be negative"),
        (["submit", "--delay", "-5min", "--", "true"], "invalid value for option '--delay': '-5min' is negative; a time span cannot be negative"),
        (["submit", "--delay", "-5", "--", "true"], "invalid value for option '--delay': '-5' is negative; a time span cannot be negative"),
        (["prune", "--older-than", "-7d"], "invalid value for option '--older-than': '-7d' is negative; a time span cannot be negative"),
        (["queue", "set", "q", "--retry-base", "-1s"], "invalid value for option '--retry-base': '-1s' is negative; a time span cannot be negative"),
        (["queue", "set", "q", "--retry-cap", "-1h"], "invalid value for option '--retry-cap': '-1h' is negative; a time span cannot be negative"),
        (["wait", "1", "--timeout", "-2s"], "invalid value for option '--timeout': '-2s' is negative; a time span cannot be negative"),
        (["submit", "--retries", "-1", "--", "true"], "invalid value for option '--retries': '-1' is not a whole number from 0 to 999"),
        (["status", "--queue", "-x"], "invalid value for option '--queue': '-x' is not a valid queue name (\(QueueName.rule))"),
    ])
    func dashValues(arguments: [String], message: String) {
        let error = parseError(arguments)
        #expect(error?.code == .invalidValue)
        #expect(error?.message == message)
    }

    @Test("a number past an option's range says so the same way whether or not it fits an Int", arguments: [
        (["submit", "--retries", "1000", "--", "true"], "invalid value for option '--retries': '1000' is too large: at most 999"),
        (["submit", "--retries", "9223372036854775807", "--", "true"], "invalid value for option '--retries': '9223372036854775807' is too large: at most 999"),
        (["submit", "--retries", "99999999999999999999", "--", "true"], "invalid value for option '--retries': '99999999999999999999' is too large: at most 999"),
        (["submit", "--priority", "99999999999999999999", "--", "true"], "invalid value for option '--priority': '99999999999999999999' is too large: at most \(Int.max)"),
        (["submit", "--priority", "-99999999999999999999", "--", "true"], "invalid value for option '--priority': '-99999999999999999999' is too small: at least \(Int.min)"),
        (["edit", "1", "--priority", "+99999999999999999999"], "invalid value for option '--priority': '+99999999999999999999' is too large: at most \(Int.max)"),
        (["submit", "--priority", "9x", "--", "true"], "invalid value for option '--priority': '9x' is not an integer"),
    ])
    func outOfRangeNumbers(arguments: [String], message: String) {
        let error = parseError(arguments)
        #expect(error?.code == .invalidValue)
        #expect(error?.message == message)
    }

    @Test("an ambiguous span is refused with an example, for every span option", arguments: [
        ["submit", "--delay", "1h30", "--", "true"], ["submit", "--timeout", "1h30", "--", "true"],
        ["prune", "--older-than", "1d12"], ["queue", "set", "q", "--retry-base", "1min30"],
        ["queue", "set", "q", "--retry-cap", "1h30"], ["wait", "1", "--timeout", "2m 30"],
    ])
    func ambiguousSpan(arguments: [String]) {
        let error = parseError(arguments)
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("is ambiguous") == true)
        #expect(error?.message.contains("1h30min") == true)
    }

    @Test("an option followed by another option still misses its value")
    func optionAfterOption() {
        #expect(parseError(["submit", "--timeout", "--wait", "--", "true"])?.code == .missingValue)
        #expect(parseError(["logs", "--tail", "-f", "1"])?.code == .missingValue)
        #expect(parseError(["status", "--queue", "-h"])?.code == .missingValue)
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
        #expect(parseError(["status", "--queue", "-bad"])?.code == .invalidValue)
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

    @Test("a mistyped command, subcommand, option or help topic is answered with the close names")
    func didYouMean() {
        #expect(parseError(["stauts"])?.message == "unknown command 'stauts'; did you mean 'status'?")
        #expect(parseError(["sumbit", "--", "true"])?.message == "unknown command 'sumbit'; did you mean 'submit'?")
        #expect(parseError(["sub"])?.message == "unknown command 'sub'; did you mean 'submit'?")
        #expect(parseError(["queue", "ad", "q"])?.message == "unknown subcommand 'ad' of 'queue'; did you mean 'add'?")
        #expect(parseError(["submit", "--prioirty", "3", "--", "true"])?.message
            == "unknown option '--prioirty'; did you mean '--priority'?")
        #expect(parseError(["status", "--jsn"])?.message == "unknown option '--jsn'; did you mean '--json'?")
        #expect(parseError(["help", "stats"])?.message == "unknown command 'stats'; did you mean 'status'?")
        // What pueue and the shell call a command is answered by meaning.
        #expect(parseError(["add", "--", "true"])?.message == "unknown command 'add'; did you mean 'submit'?")
        #expect(parseError(["kill", "3"])?.message == "unknown command 'kill'; did you mean 'cancel'?")
        #expect(parseError(["ls"])?.message == "unknown command 'ls'; did you mean 'status'?")
        #expect(parseError(["clean"])?.message == "unknown command 'clean'; did you mean 'prune'?")
        #expect(parseError(["restart", "3"])?.message == "unknown command 'restart'; did you mean 'retry'?")
        #expect(parseError(["rm", "3"])?.message == "unknown command 'rm'; did you mean 'cancel'?")
        // Meaning first, then spelling: systemctl's stop is a cancel, not top.
        #expect(parseError(["stop", "3"])?.message == "unknown command 'stop'; did you mean 'cancel' or 'top'?")
        #expect(parseError(["version"])?.message == "unknown command 'version'; did you mean '--version'?")
        #expect(parseError(["queue", "list"])?.message
            == "unknown subcommand 'list' of 'queue' (its subcommands: add, set, remove); 'orchctl queues' lists them")
        // Nothing close: no guess.
        #expect(parseError(["xyz"])?.message == "unknown command 'xyz'")
        #expect(parseError(["status", "--q"])?.message == "unknown option '--q'")
    }

    @Test("the edit distance counts insertions, deletions, substitutions and swaps, and short words get one edit")
    func suggestionDistance() {
        let names = ["status", "submit", "show", "stop", "events", "queue", "queues"]
        #expect(Suggestion.names(closeTo: "statsu", among: names) == ["status"])
        #expect(Suggestion.names(closeTo: "shw", among: names) == ["show"])
        #expect(Suggestion.names(closeTo: "shoe", among: names) == ["show"])
        #expect(Suggestion.names(closeTo: "qeuues", among: names) == ["queues"])
        #expect(Suggestion.names(closeTo: "queu", among: names) == ["queue"])
        #expect(Suggestion.names(closeTo: "stat", among: ["stats", "start", "status"]) == ["stats", "start"])
        #expect(Suggestion.names(closeTo: "sto", among: names) == ["stop"])
        #expect(Suggestion.names(closeTo: "zzzz", among: names).isEmpty)
        #expect(Suggestion.names(closeTo: "", among: names).isEmpty)
        #expect(Suggestion.names(closeTo: "status", among: names).isEmpty)
    }

    @Test("a command line of 100,000 job IDs and repeated options is parsed whole")
    func longCommandLine() throws {
        let ids = (1...100_000).map(String.init)
        let parsed = try invocation(["cancel"] + ids)
        #expect(parsed.arguments.count == 100_000)
        #expect(parsed.arguments.last == "100000")
        let environment = (1...20_000).flatMap { ["--env", "V\($0)=x"] }
        let submit = try invocation(["submit"] + environment + ["--", "true"])
        #expect(SubmitCommand.Options(decoding: submit).environment.count == 20_000)
    }

    @Test("missing and extra arguments are usage errors")
    func arity() {
        #expect(parseError(["show"])?.code == .missingArgument)
        #expect(parseError(["show", "1", "2"])?.code == .unexpectedArgument)
        #expect(parseError(["ping", "now"])?.code == .unexpectedArgument)
    }

    @Test("wait needs IDs or --all, not both; the check comes before any connection")
    func waitArity() {
        let capture = CapturedConsole()
        #expect(Orchctl.run(["--socket", "/nonexistent", "wait"], context: testContext(capture)) == .usage)
        #expect(capture.standardError.hasPrefix("Error: missing argument '<id>' (or --all, or --queue <queue> --drained)\nUsage: orchctl wait"))
        #expect(Orchctl.run(["--socket", "/nonexistent", "wait", "3", "--all"], context: testContext(capture)) == .usage)
        #expect(throws: Never.self) { try invocation(["wait", "--all", "--timeout", "5min"]) }
    }

    @Test("an integer with a range is checked against it")
    func integerRange() {
        #expect(parseError(["submit", "--retries", "-1", "--", "true"])?.message
            == "invalid value for option '--retries': '-1' is not a whole number from 0 to 999")
        #expect(parseError(["submit", "--retries", "1000", "--", "true"])?.code == .invalidValue)
        #expect(parseError(["submit", "--retries", "999", "--", "true"]) == nil)
        #expect(parseError(["status", "--limit", "0"])?.message == "invalid value for option '--limit': '0' is not a whole number of at least 1")
        #expect(parseError(["queue", "set", "q", "--concurrency", "0"])?.code == .invalidValue)
    }

    @Test("submit's new values are checked by the parser")
    func submitValues() {
        #expect(parseError(["submit", "--after", "0", "--", "true"])?.message
            == "invalid value for option '--after': '0' is not a job ID (a positive integer)")
        #expect(parseError(["submit", "--delay", "soon", "--", "true"])?.code == .invalidValue)
        #expect(parseError(["submit", "--timeout", "5 parsecs", "--", "true"])?.code == .invalidValue)
        #expect(parseError(["submit", "--at", "25:00", "--", "true"])?.message
            == "invalid value for option '--at': '25:00' is not a time (HH:MM[:SS], a local YYYY-MM-DD [HH:MM[:SS]], or RFC 3339 such as 2030-06-01T08:00:00Z)")
        #expect(parseError(["prune", "--older-than", "later"])?.code == .invalidValue)
        #expect(parseError(["queue", "set", "q", "--retry-base", "x"])?.code == .invalidValue)
    }

    @Test("'queue set' is a two-word command; a group alone or an unknown subcommand is a usage error")
    func subcommands() throws {
        let parsed = try invocation(["queue", "set", "build", "--concurrency", "4", "--json"])
        #expect(parsed.command.name == "queue set")
        #expect(parsed.arguments == ["build"])
        #expect(QueueSetCommand.Options(decoding: parsed).concurrency == 4)
        #expect(parsed.global.json)
        let alone = parseError(["queue"])
        #expect(alone?.code == .missingCommand)
        #expect(alone?.message == "missing subcommand of 'queue': add, set, remove")
        #expect(alone?.command == "queue")
        #expect(parseError(["queue", "frob"])?.message == "unknown subcommand 'frob' of 'queue' (its subcommands: add, set, remove)")
        #expect(parseError(["queue", "set"])?.code == .missingArgument)
    }

    @Test("'help queue', 'queue --help', 'help queue set' and 'queue set --help' name the right command")
    func subcommandHelp() throws {
        let group = try #require(CommandTable.command(named: "queue")).spec
        let set = try #require(CommandTable.command(named: "queue set")).spec
        #expect(try parse(["help", "queue"]) == .help(group))
        #expect(try parse(["queue", "--help"]) == .help(group))
        #expect(try parse(["help", "queue", "set"]) == .help(set))
        #expect(try parse(["queue", "set", "--help"]) == .help(set))
        #expect(try parse(["queue", "set", "-h"]) == .help(set))
        #expect(parseError(["help", "queue", "frob"])?.code == .unknownCommand)
    }

    @Test("a job command without '--' is refused with a hint that fits the mistake")
    func submitNeedsDoubleDash() {
        let error = parseError(["submit", "make", "-j4"])
        #expect(error?.code == .unexpectedArgument)
        #expect(error?.message == "unexpected argument 'make'; put the job's command after '--' (orchctl submit -- make -j4)")
        // The options given stay in the hint, and words the shell would split are quoted.
        #expect(parseError(["submit", "--wait", "echo", "a b", "it's"])?.message
            == #"unexpected argument 'echo'; put the job's command after '--' (orchctl submit --wait -- echo 'a b' 'it'\''s')"#)
        // An unquoted value with a space: the rest of it is the stray word.
        #expect(parseError(["submit", "--shell", "echo", "hi"])?.message
            == "unexpected argument 'hi'; quote a value that has spaces (--shell 'echo hi'), and put a job's command after '--'")
        #expect(parseError(["submit", "--delay", "10", "mins", "--", "true"])?.message
            == "unexpected argument 'mins'; quote a value that has spaces (--delay '10 mins'), and put a job's command after '--'")
        // Not a value that can have a space (a queue name): the command was meant.
        #expect(parseError(["submit", "--queue", "q", "make"])?.message
            == "unexpected argument 'make'; put the job's command after '--' (orchctl submit --queue q -- make)")
        #expect(parseError(["submit", "--wait", "stray", "--", "true"])?.message
            == "unexpected argument 'stray'; only options go before '--', the job's command after it")
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

    @Test("job IDs given twice count once, in the order first given")
    func repeatedJobIDs() throws {
        let parsed = try invocation(["hold", "7", "5", "7", "5", "9"])
        #expect(parsed.jobIDs == [7, 5, 9].map { JobID(rawValue: $0) })
    }

    @Test("a rule kind passes accepted text through and refuses other text with the rule's reason")
    func ruleKind() throws {
        let rule = TextRule("even-length") { $0.count % 2 == 0 ? nil : "'\($0)' has an odd length" }
        #expect(try ArgumentParser.value("ab", as: .rule(rule), what: "'x'", placeholder: "x") == .text("ab"))
        let error = #expect(throws: CommandLineError.self) { try ArgumentParser.value("abc", as: .rule(rule), what: "'x'", placeholder: "x") }
        #expect(error?.message == "invalid value for 'x': 'abc' has an odd length")
        #expect(error?.code == .invalidValue)
    }
}
