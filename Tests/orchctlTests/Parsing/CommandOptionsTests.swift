import CommandLineParsing
import OrchestratorAPI
import Testing
@testable import orchctl

@Suite("typed command options")
struct CommandOptionsTests {
    /// A valid value of `kind` that differs from any default.
    private func sample(_ kind: ValueKind) -> String {
        switch kind {
        case .text: "x7"
        case .path: "/x7"
        case .integer: "7"
        case .integerIn(let range): String(range.lowerBound + 1)
        case .keyValue: "K=V"
        case .keyedValue(let keys): keys[0] + "=x"
        case .queueName: "q7"
        case .jobID: "7"
        case .timeSpan: "7s"
        case .timeSpanIn(let range): TimeSpan.format(range.upperBound)
        case .startTime: "08:00"
        case .choice(let words): words[words.count - 1]
        // No orchctl option has a rule (orchd's do); a rule that refuses this fails the test.
        case .rule: "x7"
        }
    }

    /// The words that make `spec`'s required positional arguments valid.
    private func arguments(of spec: CommandSpec) -> [String] {
        spec.arguments.flatMap { argument -> [String] in
            switch argument.arity {
            case .one, .oneOrMore: [sample(argument.kind)]
            case .optional, .zeroOrMore: []
            }
        }
    }

    @Test("every option of every command decodes into a field of its Options, changing it from the default")
    func everyOptionReachesItsField() throws {
        for command in CommandTable.commands where !command.spec.isGroup && command.spec.name != "help" {
            let words = command.spec.name.split(separator: " ").map(String.init) + arguments(of: command.spec)
            let defaults = String(describing: command.options(of: try invocation(words)))
            for option in command.spec.options {
                let given = option.takesValue ? ["--\(option.name)", sample(option.kind)] : ["--\(option.name)"]
                let decoded = command.options(of: try invocation(words + given))
                #expect(String(describing: decoded) != defaults, "\(command.spec.name) --\(option.name) sets a field")
            }
        }
    }

    @Test("a single option given twice keeps the last value; a repeatable one keeps all, in order")
    func laterValuesWin() throws {
        let options = SubmitCommand.Options(decoding: try invocation(
            ["submit", "--queue", "a", "--queue", "b", "--after", "3", "--after", "2", "--delay", "1min", "--", "true"]))
        #expect(options.queue.rawValue == "b")
        #expect(options.after == [JobID(rawValue: 3), JobID(rawValue: 2)])
        #expect(options.delayUSec == 60_000_000)
        let wait = WaitCommand.Options(decoding: try invocation(["wait", "7", "--timeout", "1h30min"]))
        #expect(wait.timeout == .seconds(5400))
    }

    @Test("each command's name is its declaration's, and the parser finds each top-level command by it alone")
    func namesMatchDeclarations() throws {
        for command in CommandTable.commands {
            #expect(command.name == command.spec.name)
            if !command.name.contains(" ") {
                #expect(CommandTable.topLevelSpec(named: command.name)?.name == command.name)
            }
        }
        #expect(CommandTable.topLevelSpec(named: "queue set") == nil, "a subcommand is found through its group")
        #expect(CommandTable.topLevelSpec(named: "sbumit") == nil)
        #expect(throws: CommandLineError.self) { try Orchctl.parser.parse(["sbumit"]) }
    }
}

